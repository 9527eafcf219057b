/** @module `switchyard keys create|list|set-limits|disable|enable|revoke|rotate|unsuspend`. */
import { KEY_NAME_MAX_LENGTH } from '../accounts/keys.ts'
import { checkFlags, flagString, need, type Parsed, UsageError } from './args.ts'
import { GLOBAL_FLAGS, type Io, Output, withAccounts } from './context.ts'
import { LIMIT_FLAGS, limitsFromFlags, limitsText } from './key-limit-flags.ts'
import { table } from './text.ts'

const COLUMNS = [
  'id',
  'account',
  'name',
  'prefix',
  'state',
  'suspended_until',
  'created_at',
  'last_used_at',
  'limits',
]

export async function keysCommand(p: Parsed, io: Io): Promise<number> {
  const sub = p.positionals[1]
  const out = new Output(io, p.flags.json === true)
  return withAccounts(p, io, async (svc, _store, _config, change) => {
    switch (sub) {
      case 'create': {
        checkFlags(p, [...GLOBAL_FLAGS, 'name', ...LIMIT_FLAGS])
        const account = need(p, 2, 'ACCOUNT', 'keys create ACCOUNT [--name LABEL] [limits]')
        const limits = limitsFromFlags(p)
        const name = keyName(p)
        const k = await change.audited('keys create', account, () => svc.createKey(account, name, limits, ''))
        out.result(
          k,
          () =>
            `${k.key}\n\nkey ${k.id} (${k.prefix}…) for account ${k.account}. This is the only time the key is shown; store it now.\nlimits: ${limitsText(k.limits)}`,
        )
        return 0
      }
      case 'set-limits': {
        checkFlags(p, [...GLOBAL_FLAGS, ...LIMIT_FLAGS])
        const id = need(p, 2, 'key ID', 'keys set-limits ID [--rpm N] [--tpm N] ... (none clears one)')
        const limits = limitsFromFlags(p)
        if (!Object.keys(limits).length) {
          throw new UsageError(
            `nothing to change: give at least one of ${LIMIT_FLAGS.map((f) => `--${f}`).join(' ')}`,
          )
        }
        const k = await change.audited('keys set-limits', id, () => svc.setKeyLimits(id, limits))
        out.result(k, () => `key ${k.id} limits: ${limitsText(k.limits)}`)
        return 0
      }
      case 'list': {
        checkFlags(p, GLOBAL_FLAGS)
        const keys = await svc.listKeys(p.positionals[2])
        out.result(keys, () =>
          table(
            keys.map((k) => ({ ...k, limits: limitsText(k.limits) })),
            COLUMNS,
          ),
        )
        return 0
      }
      case 'disable':
      case 'enable':
      case 'revoke': {
        checkFlags(p, GLOBAL_FLAGS)
        const id = need(p, 2, 'key ID', `keys ${sub} ID`)
        const state = sub === 'disable' ? 'disabled' : sub === 'enable' ? 'enabled' : 'revoked'
        const k = await change.audited(`keys ${sub}`, id, () => svc.setKeyState(id, state))
        out.result(k, () => `key ${k.id} is ${k.state}`)
        return 0
      }
      case 'rotate': {
        checkFlags(p, GLOBAL_FLAGS)
        const id = need(p, 2, 'key ID', 'keys rotate ID')
        const k = await change.audited('keys rotate', id, () => svc.rotateKey(id))
        out.result(
          k,
          () =>
            `${k.key}\n\nkey ${k.id} has a new secret (${k.prefix}…); the old one no longer works. Store it now.`,
        )
        return 0
      }
      case 'unsuspend': {
        checkFlags(p, GLOBAL_FLAGS)
        const id = need(p, 2, 'key ID', 'keys unsuspend ID')
        const k = await change.audited('keys unsuspend', id, () => svc.unsuspendKey(id))
        out.result(k, () => `key ${k.id} is no longer suspended`)
        return 0
      }
      default:
        throw new UsageError(
          `unknown keys command '${sub ?? ''}'; use create, list, set-limits, disable, enable, revoke, rotate or unsuspend`,
        )
    }
  })
}

/**
 * `--name LABEL`: at most as long as the admin API takes, and no control characters, which a
 * label typed at a shell never means and a terminal would act on when the key is listed.
 */
function keyName(p: Parsed): string | undefined {
  const name = flagString(p, 'name')
  if (name === undefined) return undefined
  if (name.length > KEY_NAME_MAX_LENGTH) {
    throw new UsageError(`--name must be at most ${KEY_NAME_MAX_LENGTH} characters, got ${name.length}`)
  }
  if (/\p{Cc}/u.test(name)) {
    throw new UsageError('--name must not hold control characters (escape, newline, tab, ...)')
  }
  return name
}
