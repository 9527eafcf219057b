/**
 * @module
 * The request log, usage rollups, refusals, retention and console sessions on SQLite — the
 * history part, as `postgres/history.ts` is PostgreSQL's: each call one read or one write under
 * the guard.
 */
import type { Database } from 'bun:sqlite'
import type { StoreParts } from '../compose.ts'
import type { RateLimitedEvent, RefusalEvent } from '../types.ts'
import type { SqliteGuard } from './guard.ts'
import type { LimiterQueries } from './limiter.ts'
import { OverviewQueries } from './overview.ts'
import { RefusalQueries } from './refusals.ts'
import { RequestLogQueries } from './request-log.ts'
import type { RollupQueries } from './rollups.ts'
import { SessionQueries } from './sessions.ts'
import type { UsageQueries } from './usage.ts'

/** `usage`, `rollups` and `limiter`: the tables retention prunes beside the history's own. */
export function sqliteHistory(
  db: Database,
  guard: SqliteGuard,
  usage: UsageQueries,
  rollups: RollupQueries,
  limiter: LimiterQueries,
): StoreParts['history'] {
  const log = new RequestLogQueries(db)
  const sessions = new SessionQueries(db)
  const overview = new OverviewQueries(db)
  const refusals = new RefusalQueries(db)
  const rateLimitedTx = db.transaction((batch: RateLimitedEvent[]) => {
    for (const e of batch) rollups.addRateLimited(e)
  }).immediate as (batch: RateLimitedEvent[]) => void
  const refusalsTx = db.transaction((batch: RefusalEvent[]) => {
    for (const e of batch) refusals.add(e)
  }).immediate as (batch: RefusalEvent[]) => void
  const read = <T>(fn: () => T) => guard.read(fn)
  const write = <T>(fn: () => T) => guard.write(fn)
  return {
    requestLog: (filter) => read(() => log.page(filter)),
    requestById: (id) => read(() => log.byId(id)),
    usageSeries: (q) => read(() => rollups.series(q)),
    topOfDay: (q) => read(() => overview.top(q)),
    recentOutcomes: (q) => read(() => overview.outcomes(q)),
    refusals: (q) => read(() => refusals.list(q)),
    recordRateLimited: (batch) =>
      write(() => {
        if (batch.length) rateLimitedTx(batch)
      }),
    recordRefusals: (batch) =>
      write(() => {
        if (batch.length) refusalsTx(batch)
      }),
    // The alert queue's rows are pruned beside these, by the composed store (compose.ts).
    pruneHistory: (p) =>
      write(
        () =>
          usage.pruneLog(p) +
          limiter.prune(p.logKeepAfter, p.chunk) +
          limiter.reserve.prune(p.logKeepAfter, p.chunk) +
          rollups.prune(p.hourlyBefore, p.dailyBefore, p.chunk) +
          refusals.prune(p.hourlyBefore, p.chunk),
      ),
    createSession: (hash, s, now) => write(() => sessions.create(hash, s, now)),
    getSession: (hash, now) => read(() => sessions.get(hash, now)),
    deleteSession: (hash) => write(() => sessions.delete(hash)),
    listSessions: (now, limit) => read(() => sessions.list(now, limit)),
    endSessions: (sel) => write(() => sessions.end(sel)),
  }
}
