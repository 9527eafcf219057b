/**
 * @module
 * The request log, usage rollups, refusals, retention and console sessions on SQLite — the
 * history part, as `postgres/history.ts` is PostgreSQL's: each call one read or one write under
 * the guard.
 */
import type { Database } from 'bun:sqlite'
import type {
  ConsoleSession,
  HistoryStore,
  OutcomesQuery,
  OverviewStore,
  RateLimitedEvent,
  RefusalEvent,
  RefusalQuery,
  RequestLogFilter,
  RetentionPolicy,
  SessionAdminStore,
  SessionSelector,
  TopQuery,
  UsageSeriesQuery,
} from '../types.ts'
import type { SqliteGuard } from './guard.ts'
import type { LimiterQueries } from './limiter.ts'
import { OverviewQueries } from './overview.ts'
import { RefusalQueries } from './refusals.ts'
import { RequestLogQueries } from './request-log.ts'
import type { RollupQueries } from './rollups.ts'
import { SessionQueries } from './sessions.ts'
import type { UsageQueries } from './usage.ts'

export class SqliteHistory implements HistoryStore, OverviewStore, SessionAdminStore {
  private readonly log: RequestLogQueries
  private readonly sessions: SessionQueries
  private readonly overview: OverviewQueries
  private readonly refusalsQ: RefusalQueries
  private readonly rateLimitedTx: (batch: RateLimitedEvent[]) => void
  private readonly refusalsTx: (batch: RefusalEvent[]) => void

  constructor(
    db: Database,
    private readonly guard: SqliteGuard,
    /** The tables retention prunes beside the history's own. */
    private readonly usage: UsageQueries,
    private readonly rollups: RollupQueries,
    private readonly limiter: LimiterQueries,
  ) {
    this.log = new RequestLogQueries(db)
    this.sessions = new SessionQueries(db)
    this.overview = new OverviewQueries(db)
    this.refusalsQ = new RefusalQueries(db)
    this.rateLimitedTx = db.transaction((batch: RateLimitedEvent[]) => {
      for (const e of batch) this.rollups.addRateLimited(e)
    }).immediate as never
    this.refusalsTx = db.transaction((batch: RefusalEvent[]) => {
      for (const e of batch) this.refusalsQ.add(e)
    }).immediate as never
  }

  requestLog(filter: RequestLogFilter) {
    return this.guard.read(() => this.log.page(filter))
  }
  requestById(id: number) {
    return this.guard.read(() => this.log.byId(id))
  }
  usageSeries(q: UsageSeriesQuery) {
    return this.guard.read(() => this.rollups.series(q))
  }
  topOfDay(q: TopQuery) {
    return this.guard.read(() => this.overview.top(q))
  }
  recentOutcomes(q: OutcomesQuery) {
    return this.guard.read(() => this.overview.outcomes(q))
  }
  recordRateLimited(batch: RateLimitedEvent[]) {
    return this.guard.write(() => {
      if (batch.length) this.rateLimitedTx(batch)
    })
  }
  recordRefusals(batch: RefusalEvent[]) {
    return this.guard.write(() => {
      if (batch.length) this.refusalsTx(batch)
    })
  }
  refusals(q: RefusalQuery) {
    return this.guard.read(() => this.refusalsQ.list(q))
  }
  /** The alert queue's rows are pruned beside these, by the composed store (compose.ts). */
  pruneHistory(p: RetentionPolicy) {
    return this.guard.write(
      () =>
        this.usage.pruneLog(p) +
        this.limiter.prune(p.logKeepAfter, p.chunk) +
        this.limiter.reserve.prune(p.logKeepAfter, p.chunk) +
        this.rollups.prune(p.hourlyBefore, p.dailyBefore, p.chunk) +
        this.refusalsQ.prune(p.hourlyBefore, p.chunk),
    )
  }
  createSession(hash: string, s: ConsoleSession, now: number) {
    return this.guard.write(() => this.sessions.create(hash, s, now))
  }
  getSession(hash: string, now: number) {
    return this.guard.read(() => this.sessions.get(hash, now))
  }
  deleteSession(hash: string) {
    return this.guard.write(() => this.sessions.delete(hash))
  }
  listSessions(now: number, limit: number) {
    return this.guard.read(() => this.sessions.list(now, limit))
  }
  endSessions(sel: SessionSelector) {
    return this.guard.write(() => this.sessions.end(sel))
  }
}
