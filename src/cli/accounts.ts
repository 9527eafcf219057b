/** @module `switchyard accounts create|list|show|set-plan|disable|enable`. */
import { checkFlags, flagInt, flagString, flagTime, need, type Parsed, UsageError } from './args.ts'
import { GLOBAL_FLAGS, type Io, Output, withAccounts } from './context.ts'
import { fields, table } from './text.ts'

const COLUMNS = ['id', 'name', 'plan', 'enabled', 'plan_status', 'plan_expires_at', 'remaining_days']

export async function accountsCommand(p: Parsed, io: Io): Promise<number> {
  const sub = p.positionals[1]
  const out = new Output(io, p.flags.json === true)
  const flags = (...extra: string[]) => checkFlags(p, [...GLOBAL_FLAGS, ...extra])
  return withAccounts(p, io, async (svc, _store, _config, change) => {
    switch (sub) {
      case 'create': {
        flags('plan', 'days', 'expires-at')
        const name = need(p, 2, 'account NAME', 'accounts create NAME --plan PLAN [--days N]')
        const plan = flagString(p, 'plan')
        const a = await change.audited('accounts create', name, () =>
          svc.createAccount(name, plan, ...term(p)),
        )
        out.result(a, () => `created account ${a.name}\n${fields({ ...a })}`)
        return 0
      }
      case 'list': {
        flags()
        const all = await svc.listAccounts()
        out.result(all, () => table(all as never, COLUMNS))
        return 0
      }
      case 'show': {
        flags()
        const name = need(p, 2, 'account NAME', 'accounts show NAME')
        const a = await svc.view(await svc.getAccount(name))
        const history = await svc.planHistory(name)
        out.result(
          { ...a, plan_history: history },
          () =>
            `${fields({ ...a })}\n\nplan history:\n${table(history, ['plan', 'started_at', 'expires_at', 'reason', 'changed_at'])}`,
        )
        return 0
      }
      case 'set-plan': {
        flags('days', 'expires-at')
        const usage = 'accounts set-plan NAME PLAN [--days N | --expires-at TIME]'
        const name = need(p, 2, 'account NAME', usage)
        const plan = need(p, 3, 'PLAN', usage)
        const a = await change.audited(`accounts set-plan ${plan}`, name, () =>
          svc.setPlan(name, plan, ...term(p)),
        )
        out.result(a, () => `account ${a.name} is now on plan ${a.plan}\n${fields({ ...a })}`)
        return 0
      }
      case 'disable':
      case 'enable': {
        flags()
        const name = need(p, 2, 'account NAME', `accounts ${sub} NAME`)
        const a = await change.audited(`accounts ${sub}`, name, () => svc.setEnabled(name, sub === 'enable'))
        out.result(a, () => `account ${a.name} ${sub}d`)
        return 0
      }
      default:
        throw new UsageError(
          `unknown accounts command '${sub ?? ''}'; use create, list, show, set-plan, disable or enable`,
        )
    }
  })
}

/**
 * `--days N` (0 = the plan expires now, to try expiry without waiting) or `--expires-at TIME`.
 * Returns the arguments `createAccount` / `setPlan` take after the plan.
 */
function term(p: Parsed): [days: number | undefined, expiresAt: number | undefined] {
  const days = flagInt(p, 'days', 0, 36500)
  if (p.flags['expires-at'] === undefined) return [days, undefined]
  if (days !== undefined) throw new UsageError('give --days or --expires-at, not both')
  return [undefined, flagTime(p, 'expires-at')]
}
