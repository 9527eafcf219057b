/** @module `switchyard accounts create|list|show|set-plan|disable|enable`. */
import { type AccountView, enabledChange } from '../accounts/service.ts'
import { flagInt, flagString, flagTime, need, type Parsed, UsageError } from './args.ts'
import { type CommandSpec, Output, subcommand, withAccounts } from './context.ts'
import type { Io } from './io.ts'
import { fields, sessionsNote, table } from './text.ts'

const COLUMNS = ['id', 'name', 'plan', 'enabled', 'plan_status', 'plan_expires_at', 'remaining_days']

const TERM = '[--days N | --expires-at TIME]'
const COMMANDS = {
  create: {
    usage: `accounts create NAME [--plan PLAN] ${TERM}`,
    words: 3,
    flags: ['plan', 'days', 'expires-at'],
  },
  list: { usage: 'accounts list', words: 2 },
  show: { usage: 'accounts show NAME', words: 3 },
  'set-plan': { usage: `accounts set-plan NAME PLAN ${TERM}`, words: 4, flags: ['days', 'expires-at'] },
  disable: { usage: 'accounts disable NAME', words: 3 },
  enable: { usage: 'accounts enable NAME', words: 3 },
} satisfies Record<string, CommandSpec>

export async function accountsCommand(p: Parsed, io: Io): Promise<number> {
  const { sub, spec } = subcommand(p, 'accounts', COMMANDS)
  const out = new Output(p, io)
  const name = sub === 'list' ? '' : need(p, 2, 'account NAME', spec.usage)
  const plan = sub === 'set-plan' ? need(p, 3, 'PLAN', spec.usage) : ''
  // Checked before the store opens (and before an audit line); only create and set-plan take these.
  const ends = term(p)
  const createPlan = sub === 'create' ? flagString(p, 'plan') : undefined
  return withAccounts(p, io, async (svc, _store, _config, change) => {
    switch (sub) {
      case 'create':
        return out.printed(
          change.audited(
            'accounts create',
            name,
            () => svc.createAccount(name, createPlan, ...ends),
            planChange,
          ),
          (a) => `created account ${a.name}\n${fields({ ...a })}`,
        )
      case 'list':
        return out.printed(svc.listAccounts(), (all) => table(all as never, COLUMNS))
      case 'show': {
        const a = await svc.view(await svc.getAccount(name))
        const history = await svc.planHistory(name)
        out.result(
          { ...a, plan_history: history },
          () =>
            `${fields({ ...a })}\n\nplan history:\n${table(history, ['plan', 'started_at', 'expires_at', 'reason', 'changed_at'])}`,
        )
        return 0
      }
      case 'set-plan':
        return out.printed(
          change.audited(
            `accounts set-plan ${plan}`,
            name,
            () => svc.setPlan(name, plan, ...ends),
            planChange,
          ),
          (a) => `account ${a.name} is now on plan ${a.plan}\n${fields({ ...a })}`,
        )
      case 'disable':
      case 'enable':
        return out.printed(
          change.audited(
            `accounts ${sub}`,
            name,
            () => svc.setEnabled(name, sub === 'enable'),
            enabledChange,
          ),
          (r) => `account ${r.account.name} ${sub}d${sessionsNote(r.sessionsEnded)}`,
          (r) => r.account,
        )
    }
  })
}

/** What a new or changed plan is, for the audit line. */
const planChange = (a: AccountView) => ({ plan: a.plan, plan_expires_at: a.plan_expires_at })

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
