/** @module `switchyard sessions list|revoke`: the console's live sessions, and ending them. */
import { endSessions, listSessions, sessionSelector } from '../auth/sessions-admin.ts'
import { systemClock } from '../util/clock.ts'
import { checkFlags, flagString, type Parsed, UsageError } from './args.ts'
import { GLOBAL_FLAGS, type Io, Output, withAccounts } from './context.ts'
import { table } from './text.ts'

const COLUMNS = ['id', 'kind', 'key_id', 'created_at', 'expires_at']
const REVOKE = 'sessions revoke ID | sessions revoke --key KEY_ID | sessions revoke --kind admin|key'

export async function sessionsCommand(p: Parsed, io: Io): Promise<number> {
  const sub = p.positionals[1]
  const out = new Output(io, p.flags.json === true)
  return withAccounts(p, io, async (_svc, store, _config, change) => {
    switch (sub) {
      case 'list': {
        checkFlags(p, GLOBAL_FLAGS)
        const list = await listSessions(store, systemClock.now())
        out.result(list.data, () =>
          list.data.length ? table(list.data, COLUMNS) : 'no live console sessions',
        )
        return 0
      }
      case 'revoke': {
        checkFlags(p, [...GLOBAL_FLAGS, 'key', 'kind'])
        const id = p.positionals[2]
        const key = flagString(p, 'key')
        const kind = flagString(p, 'kind')
        if ([id, key, kind].filter((v) => v !== undefined).length !== 1)
          throw new UsageError(`name exactly one session or group: ${REVOKE}`)
        const sel = sessionSelector({ id, key, kind })
        const r = await change.audited('sessions revoke', id ?? key ?? kind ?? '', () =>
          endSessions(store, sel),
        )
        out.result(r, () => `${r.ended} console session${r.ended === 1 ? '' : 's'} ended`)
        return 0
      }
      default:
        throw new UsageError(`unknown sessions command '${sub ?? ''}'; use list or revoke`)
    }
  })
}
