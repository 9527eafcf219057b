/** @module `switchyard sessions list|revoke`: the console's live sessions, and ending them. */
import { endSessions, listSessions, sessionSelector } from '../auth/sessions-admin.ts'
import { systemClock } from '../util/clock.ts'
import { flagString, type Parsed, UsageError } from './args.ts'
import { type CommandSpec, Output, subcommand, withAccounts } from './context.ts'
import type { Io } from './io.ts'
import { sessionsEnded, table } from './text.ts'

const COLUMNS = ['id', 'kind', 'key_id', 'created_at', 'expires_at']
const REVOKE = 'sessions revoke ID | sessions revoke --key KEY_ID | sessions revoke --kind admin|key'

const COMMANDS = {
  list: { usage: 'sessions list', words: 2 },
  revoke: { usage: REVOKE, words: 3, flags: ['key', 'kind'] },
} satisfies Record<string, CommandSpec>

export async function sessionsCommand(p: Parsed, io: Io): Promise<number> {
  const { sub } = subcommand(p, 'sessions', COMMANDS)
  const out = new Output(p, io)
  const id = p.positionals[2]
  const key = flagString(p, 'key')
  const kind = flagString(p, 'kind')
  if (sub === 'revoke' && [id, key, kind].filter((v) => v !== undefined).length !== 1)
    throw new UsageError(`name exactly one session or group: ${REVOKE}`)
  return withAccounts(p, io, async (_svc, store, _config, change) => {
    switch (sub) {
      case 'list':
        return out.printed(
          listSessions(store, systemClock.now()),
          (list) => (list.data.length ? table(list.data, COLUMNS) : 'no live console sessions'),
          (list) => list.data,
        )
      case 'revoke': {
        const sel = sessionSelector({ id, key, kind })
        return out.printed(
          change.audited(
            'sessions revoke',
            id ?? key ?? kind ?? '',
            () => endSessions(store, sel),
            (r) => ({ ended: r.ended }),
          ),
          (r) => sessionsEnded(r.ended),
        )
      }
    }
  })
}
