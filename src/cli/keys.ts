/** @module `switchyard keys create|list|set-limits|disable|enable|revoke|rotate|unsuspend`. */
import { keyNameProblem } from '../accounts/keys.ts'
import { keyStateChange } from '../accounts/service.ts'
import { flagString, need, type Parsed, UsageError } from './args.ts'
import { type CommandSpec, type Io, Output, subcommand, withAccounts } from './context.ts'
import { LIMIT_FLAGS, limitsFromFlags, limitsText } from './key-limit-flags.ts'
import { sessionsEnded, table } from './text.ts'

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

const COMMANDS = {
  create: { usage: 'keys create ACCOUNT [--name LABEL] [limits]', words: 3, flags: ['name', ...LIMIT_FLAGS] },
  'set-limits': {
    usage: 'keys set-limits ID [--rpm N] [--tpm N] ... (none clears one)',
    words: 3,
    flags: LIMIT_FLAGS,
  },
  list: { usage: 'keys list [ACCOUNT]', words: 3 },
  disable: { usage: 'keys disable ID', words: 3 },
  enable: { usage: 'keys enable ID', words: 3 },
  revoke: { usage: 'keys revoke ID', words: 3 },
  rotate: { usage: 'keys rotate ID', words: 3 },
  unsuspend: { usage: 'keys unsuspend ID', words: 3 },
} satisfies Record<string, CommandSpec>

export async function keysCommand(p: Parsed, io: Io): Promise<number> {
  const { sub, spec } = subcommand(p, 'keys', COMMANDS)
  const out = new Output(io, p.flags.json === true)
  // The account for create, else the key's id; list takes an optional account instead.
  const id = sub === 'list' ? '' : need(p, 2, sub === 'create' ? 'ACCOUNT' : 'key ID', spec.usage)
  const limits = sub === 'create' || sub === 'set-limits' ? limitsFromFlags(p) : {}
  const name = sub === 'create' ? keyName(p) : undefined
  if (sub === 'set-limits' && !Object.keys(limits).length) {
    throw new UsageError(
      `nothing to change: give at least one of ${LIMIT_FLAGS.map((f) => `--${f}`).join(' ')}`,
    )
  }
  return withAccounts(p, io, async (svc, _store, _config, change) => {
    switch (sub) {
      case 'create': {
        const k = await change.audited(
          'keys create',
          id,
          () => svc.createKey(id, name, limits, ''),
          (k) => ({ key: k.id, prefix: k.prefix, name: k.name, limits: k.limits }),
        )
        out.result(
          k,
          () =>
            `${k.key}\n\nkey ${k.id} (${k.prefix}…) for account ${k.account}. This is the only time the key is shown; store it now.\nlimits: ${limitsText(k.limits)}`,
        )
        return 0
      }
      case 'set-limits': {
        const k = await change.audited(
          'keys set-limits',
          id,
          () => svc.setKeyLimits(id, limits),
          (k) => ({ limits: k.limits }),
        )
        out.result(k, () => `key ${k.id} limits: ${limitsText(k.limits)}`)
        return 0
      }
      case 'list': {
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
        const state = sub === 'disable' ? 'disabled' : sub === 'enable' ? 'enabled' : 'revoked'
        const r = await change.audited(`keys ${sub}`, id, () => svc.setKeyState(id, state), keyStateChange)
        const k = r.key
        const ended = r.sessionsEnded
        const note = ended ? `; ${sessionsEnded(ended)}` : ''
        out.result(k, () => `key ${k.id} is ${k.state}${note}`)
        return 0
      }
      case 'rotate': {
        const k = await change.audited(
          'keys rotate',
          id,
          () => svc.rotateKey(id),
          (k) => ({ prefix: k.prefix }),
        )
        out.result(
          k,
          () =>
            `${k.key}\n\nkey ${k.id} has a new secret (${k.prefix}…); the old one no longer works. Store it now.`,
        )
        return 0
      }
      case 'unsuspend': {
        const k = await change.audited(
          'keys unsuspend',
          id,
          () => svc.unsuspendKey(id),
          (k) => ({ suspended_until: k.suspended_until }),
        )
        out.result(k, () => `key ${k.id} is no longer suspended`)
        return 0
      }
    }
  })
}

/** `--name LABEL`: a key name as the admin API takes it (`keyNameProblem`). */
function keyName(p: Parsed): string | undefined {
  const name = flagString(p, 'name')
  const problem = name === undefined ? undefined : keyNameProblem(name)
  if (problem) throw new UsageError(`--name ${problem}`)
  return name
}
