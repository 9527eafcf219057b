/**
 * @module
 * What each limit row has used, read from the Redis limiter's keys without a script: nothing is
 * charged (`Limiter.rowStates`: `/v1/usage`, headers). An account whose state Redis does not
 * hold (lost, or no admission yet) is read as a rebuild would hold it, from the database's rows,
 * its holds too (the reservations the database calls in flight, not Redis's lost or stale `res`);
 * a token window no admission charges in Redis (a budget-only plan's tokens) from the database's.
 */
import type { RedisClient } from 'bun'
import { type LimitRow, periodBounds, type RowState, rowState } from '../../limits/rows.ts'
import type { WindowSpans } from '../../limits/types.ts'
import type { AdmissionLog, WindowLimit } from '../types.ts'
import { type HeldCharge, heldCharges } from './held.ts'
import { databaseState, prefixOf } from './rebuild.ts'

export interface RowStateSources {
  spans: WindowSpans
  log: Pick<AdmissionLog, 'chargeHistory' | 'tokensSince'>
  /** The account's request windows (the limiter's own). */
  requests(accountId: number): Promise<{ minute: WindowLimit; day: WindowLimit }>
}

/** Each row's use at `at` (Redis's clock, or the caller's). */
export async function readRowStates(
  client: RedisClient,
  q: { accountId: number; keyId: string | null; rows: LimitRow[] },
  at: number,
  from: RowStateSources,
): Promise<RowState[]> {
  const pre = prefixOf(q.accountId)
  const built = Number(await client.send('EXISTS', [`${pre}built`]))
  const fromDb = built ? null : (await databaseState(from.log, from.spans, q.accountId, at)).state
  const holds: HeldCharge[] = fromDb
    ? fromDb.res
    : q.rows.some((r) => r.resource !== 'requests')
      ? await heldCharges(client, pre)
      : []
  return Promise.all(
    q.rows.map(async (row) => {
      const sc = row.scope === 'account' ? 'a' : `k:${q.keyId}`
      if (row.resource === 'requests' && row.scope === 'account') {
        const w = await from.requests(q.accountId)
        const win = row.window === 'minute' ? w.minute : w.day
        return rowState(row, win.used, win.resetAt === null ? null : win.resetAt, 0)
      }
      if (row.window === 'period') {
        const p = periodBounds(row.period!, at)
        const key = `${pre}sp:${sc}:${row.period}:${p.start}`
        const v = fromDb
          ? (fromDb.spend.find((x) => x[0] === key)?.[1] ?? 0)
          : await client.send('GET', [key])
        const held = holds.reduce((n, h) => n + (h.s.includes(key) ? h.m : 0), 0)
        return rowState(row, Number(v ?? 0), null, p.resetsAt, held)
      }
      const span = row.window === 'minute' ? from.spans.minuteMs : from.spans.dayMs
      const base = `${pre}c:${sc}:${row.resource}:${row.window}`
      const held =
        row.resource === 'requests'
          ? undefined
          : holds.reduce((n, h) => n + (h.at > at - span && h.w.includes(base) ? h.t : 0), 0)
      if (fromDb) {
        const inside = (fromDb.windows.find((w) => w.base === base)?.m ?? []).filter((m) => m[1] > at - span)
        const firstAt = inside.length ? Math.min(...inside.map((m) => m[1])) : null
        return rowState(
          row,
          inside.reduce((n, m) => n + m[2], 0),
          firstAt,
          span,
          held,
        )
      }
      if (row.resource === 'tokens' && !Number(await client.send('EXISTS', [`${base}:z`]))) {
        const t = await from.log.tokensSince(q.accountId, row.scope === 'key' ? q.keyId : null, at - span)
        return rowState(row, t.used, t.first, span, held)
      }
      // Member, score pairs: flat or nested, as the client's protocol version returns them.
      const reply = (await client.send('ZRANGEBYSCORE', [
        `${base}:z`,
        `(${at - span}`,
        '+inf',
        'WITHSCORES',
      ])) as unknown[]
      const inside = reply.flat() as Array<string | number>
      if (!inside.length) return rowState(row, 0, null, span, held)
      const members = inside.filter((_, i) => i % 2 === 0).map(String)
      const amounts = (await client.send('HMGET', [`${base}:a`, ...members])) as Array<string | null>
      const used = amounts.reduce((n, a) => n + Number(a ?? 0), 0)
      return rowState(row, used, Number(inside[1]), span, held)
    }),
  )
}
