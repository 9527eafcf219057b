/** @module `switchyard keys create|list|set-limits|disable|enable|revoke|rotate|unsuspend`. */
import { keyNameProblem } from '../accounts/keys.ts'
import { keyStateChange } from '../accounts/service.ts'
import { flagString, need, type Parsed, UsageError } from './args.ts'
import { type CommandSpec, Output, subcommand, withAccounts } from './context.ts'
import type { Io } from './io.ts'
import { LIMIT_FLAGS, limitsFromFlags, limitsText } from './key-limit-flags.ts'
import { sessionsNote, table } from './text.ts'

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
  const out = new Output(p, io)
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
    /** One audited change of key `id` (or, for create, of account `id`): `keys <sub>`. */
    const audited = <R>(run: () => Promise<R>, changed: (r: R) => Record<string, unknown>) =>
      change.audited(`keys ${sub}`, id, run, changed)
    switch (sub) {
      case 'create':
        return out.printed(
          audited(
            () => svc.createKey(id, name, limits, ''),
            (k) => ({ key: k.id, prefix: k.prefix, name: k.name, limits: k.limits }),
          ),
          (k) =>
            `${k.key}\n\nkey ${k.id} (${k.prefix}…) for account ${k.account}. This is the only time the key is shown; store it now.\nlimits: ${limitsText(k.limits)}`,
        )
      case 'set-limits':
        return out.printed(
          audited(
            () => svc.setKeyLimits(id, limits),
            (k) => ({ limits: k.limits }),
          ),
          (k) => `key ${k.id} limits: ${limitsText(k.limits)}`,
        )
      case 'list':
        return out.printed(svc.listKeys(p.positionals[2]), (keys) =>
          table(
            keys.map((k) => ({ ...k, limits: limitsText(k.limits) })),
            COLUMNS,
          ),
        )
      case 'disable':
      case 'enable':
      case 'revoke': {
        const state = sub === 'disable' ? 'disabled' : sub === 'enable' ? 'enabled' : 'revoked'
        return out.printed(
          audited(() => svc.setKeyState(id, state), keyStateChange),
          (r) => `key ${r.key.id} is ${r.key.state}${sessionsNote(r.sessionsEnded)}`,
          (r) => r.key,
        )
      }
      case 'rotate':
        return out.printed(
          audited(
            () => svc.rotateKey(id),
            (k) => ({ prefix: k.prefix }),
          ),
          (k) =>
            `${k.key}\n\nkey ${k.id} has a new secret (${k.prefix}…); the old one no longer works. Store it now.`,
        )
      case 'unsuspend':
        return out.printed(
          audited(
            () => svc.unsuspendKey(id),
            (k) => ({ suspended_until: k.suspended_until }),
          ),
          (k) => `key ${k.id} is no longer suspended`,
        )
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
