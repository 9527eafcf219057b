/**
 * @module
 * The embedded SQLite store (bun:sqlite, WAL). Every statement is prepared with bound
 * parameters. `synchronous=NORMAL` in WAL mode keeps every committed transaction across a
 * process crash (`kill -9`); only an OS crash or power loss can lose the last commits.
 *
 * Admissions are group-committed: those requested in the same event-loop turn share one write
 * transaction, because the commit (not the insert) is most of an admission's cost. Each
 * caller's promise still resolves only after its admission is committed.
 *
 * No call blocks the event loop on another connection's lock: see SqliteGuard.
 */

import { Database } from 'bun:sqlite'
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs'
import { dirname } from 'node:path'
import type { LimitRow } from '../../limits/rows.ts'
import { DEFAULT_SPANS, type Extension, type WindowSpans } from '../../limits/types.ts'
import type { DeliveryTry, NewAlert } from '../alert-types.ts'
import { StoreBusyError } from '../errors.ts'
import type {
  AccountPage,
  AdmitInput,
  AdmitResult,
  Completion,
  ConsoleSession,
  KeyLimits,
  KeyPage,
  KeyState,
  OutcomesQuery,
  PlanChange,
  PlanTerm,
  RateLimitedEvent,
  Refusal,
  RefusalEvent,
  RefusalQuery,
  RequestLogFilter,
  RetentionPolicy,
  SessionSelector,
  Store,
  TopQuery,
  UsageSeriesQuery,
} from '../types.ts'
import { AccountQueries } from './accounts.ts'
import { AlertQueries } from './alerts.ts'
import { ChargeQueries } from './charges.ts'
import { isBusy } from './errors.ts'
import { SqliteGuard } from './guard.ts'
import { LimiterQueries } from './limiter.ts'
import { migrate } from './migrations.ts'
import { OverviewQueries } from './overview.ts'
import { RefusalQueries } from './refusals.ts'
import { RequestLogQueries } from './request-log.ts'
import { RollupQueries } from './rollups.ts'
import { SessionQueries } from './sessions.ts'
import { UsageQueries } from './usage.ts'

export interface SqliteOptions {
  path: string
  windows?: WindowSpans
  busyTimeoutMs?: number
  now?: number
}

export function openSqliteStore(opts: SqliteOptions): SqliteStore {
  if (opts.path !== ':memory:') createPrivateFile(opts.path)
  const db = new Database(opts.path, { create: true, strict: true })
  const waitMs = Math.trunc(opts.busyTimeoutMs ?? 5000)
  // Start-up (migrations) may block on another process's lock; nothing is being served yet.
  db.run(`PRAGMA busy_timeout = ${waitMs}`)
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = NORMAL')
  db.run('PRAGMA foreign_keys = ON')
  migrate(db, opts.now ?? Date.now())
  // From here on a locked database fails at once and SqliteGuard waits for it without blocking.
  db.run('PRAGMA busy_timeout = 0')
  return new SqliteStore(db, new SqliteGuard(opts.path, waitMs), opts.windows)
}

/**
 * The database holds key hashes and the request log: owner-only. SQLite gives the -wal and -shm
 * files the mode of the database file, so creating that one 0600 covers all three.
 */
function createPrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true })
  if (existsSync(path)) return
  try {
    closeSync(openSync(path, 'wx', 0o600))
  } catch (err) {
    // Another process created it first: that one's mode stands.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
}

interface PendingAdmit {
  input: AdmitInput
  /** performance.now() after which this admission stops waiting for the lock. */
  deadline: number
  resolve: (r: AdmitResult) => void
  reject: (err: unknown) => void
}

export class SqliteStore implements Store {
  private readonly accounts: AccountQueries
  private readonly limiter: LimiterQueries
  private readonly charges: ChargeQueries
  private readonly usage: UsageQueries
  private readonly log: RequestLogQueries
  private readonly rollups: RollupQueries
  private readonly sessions: SessionQueries
  private readonly overview: OverviewQueries
  private readonly rateLimitedTx: (batch: RateLimitedEvent[]) => void
  private readonly sweepTx: (before: number) => number
  private readonly refusalsQ: RefusalQueries
  private readonly refusalsTx: (batch: RefusalEvent[]) => void
  private readonly alerts: AlertQueries
  private pendingAdmits: PendingAdmit[] = []
  /** A flush is queued (next turn, or a retry while the lock is taken). */
  private admitQueued = false
  private admitDelay = 0

  constructor(
    readonly db: Database,
    private readonly guard: SqliteGuard,
    windows?: WindowSpans,
  ) {
    this.accounts = new AccountQueries(db)
    this.limiter = new LimiterQueries(db, windows)
    this.charges = new ChargeQueries(db, windows ?? DEFAULT_SPANS)
    this.rollups = new RollupQueries(db)
    this.usage = new UsageQueries(db, this.rollups, this.limiter.reserve)
    this.log = new RequestLogQueries(db)
    this.sessions = new SessionQueries(db)
    this.overview = new OverviewQueries(db)
    this.sweepTx = db.transaction((before: number) => this.limiter.reserve.sweep(before, 1000))
      .immediate as never
    this.rateLimitedTx = db.transaction((batch: RateLimitedEvent[]) => {
      for (const e of batch) this.rollups.addRateLimited(e)
    }).immediate as never
    this.refusalsQ = new RefusalQueries(db)
    this.alerts = new AlertQueries(db)
    this.refusalsTx = db.transaction((batch: RefusalEvent[]) => {
      for (const e of batch) this.refusalsQ.add(e)
    }).immediate as never
  }

  private read<T>(fn: () => T): Promise<T> {
    return this.guard.run(fn)
  }
  private write<T>(fn: () => T): Promise<T> {
    return this.guard.run(fn, true)
  }

  createAccount(a: {
    name: string
    plan: string
    planStartedAt: number
    planExpiresAt: number | null
    now: number
  }) {
    return this.write(() => this.accounts.createAccount(a))
  }
  getAccount(nameOrId: string | number) {
    return this.read(() => this.accounts.getAccount(nameOrId))
  }
  listAccounts(page?: AccountPage) {
    return this.read(() => this.accounts.listAccounts(page))
  }
  setAccountPlan(id: number, change: PlanChange, expected?: PlanTerm) {
    return this.write(() => this.accounts.setAccountPlan(id, change, expected))
  }
  setAccountEnabled(id: number, enabled: boolean) {
    return this.write(() => this.accounts.setAccountEnabled(id, enabled))
  }
  planHistory(accountId: number) {
    return this.read(() => this.accounts.planHistory(accountId))
  }
  createKey(k: {
    id: string
    accountId: number
    name: string | null
    prefix: string
    hash: string
    now: number
    limits?: KeyLimits | null
  }) {
    return this.write(() => this.accounts.createKey(k))
  }
  setKeyLimits(id: string, limits: KeyLimits | null) {
    return this.write(() => this.accounts.setKeyLimits(id, limits))
  }
  findKeyByHash(hash: string) {
    return this.read(() => this.accounts.findKeyByHash(hash))
  }
  getKey(id: string) {
    return this.read(() => this.accounts.getKey(id))
  }
  listKeys(accountId?: number, page?: KeyPage) {
    return this.read(() => this.accounts.listKeys(accountId, page))
  }
  setKeyState(id: string, state: KeyState) {
    return this.write(() => this.accounts.setKeyState(id, state))
  }
  rotateKey(id: string, hash: string, prefix: string, now: number) {
    return this.write(() => this.accounts.rotateKey(id, hash, prefix, now))
  }
  setKeySuspended(id: string, until: number | null) {
    return this.write(() => this.accounts.setKeySuspended(id, until))
  }
  authGeneration() {
    return this.read(() => this.accounts.authGeneration())
  }

  admit(input: AdmitInput): Promise<AdmitResult> {
    return new Promise((resolve, reject) => {
      this.pendingAdmits.push({ input, deadline: performance.now() + this.guard.waitMs, resolve, reject })
      if (!this.admitQueued) {
        this.admitQueued = true
        setImmediate(this.flushAdmits)
      }
    })
  }

  /**
   * Decides every pending admission in one write transaction. While another connection holds
   * the lock, the batch (and whatever joins it) waits on a timer with backoff; each admission
   * gives up at its own deadline with StoreBusyError.
   */
  private readonly flushAdmits = (): void => {
    this.admitQueued = false
    const batch = this.pendingAdmits
    if (!batch.length) return
    this.pendingAdmits = []
    let results: Array<AdmitResult | Error>
    try {
      this.guard.assertFile()
      results = this.limiter.admitMany(batch.map((p) => p.input))
      this.admitDelay = 0
    } catch (err) {
      if (isBusy(err)) {
        this.retryAdmits(batch)
        return
      }
      const e = this.guard.classify(err)
      for (const p of batch) p.reject(e)
      return
    }
    this.guard.wrote()
    batch.forEach((p, i) => {
      const r = results[i]!
      if (r instanceof Error) p.reject(this.guard.classify(r))
      else p.resolve(r)
    })
  }

  private retryAdmits(batch: PendingAdmit[]): void {
    const now = performance.now()
    const waiting = batch.filter((p) => {
      if (p.deadline > now) return true
      p.reject(new StoreBusyError(this.guard.waitMs))
      return false
    })
    // Arrival order is decision order: the ones that waited go first.
    this.pendingAdmits = waiting.concat(this.pendingAdmits)
    if (!this.pendingAdmits.length) return
    this.admitDelay = Math.min(Math.max(1, this.admitDelay * 2), 20)
    this.admitQueued = true
    setTimeout(this.flushAdmits, this.admitDelay)
  }

  countRejection(r: Refusal) {
    return this.write(() => this.limiter.countRejection(r.keyId, r.now, r.suspension))
  }
  extend(q: Extension) {
    return this.write(() => this.limiter.extend(q))
  }
  windows(accountId: number, now: number, rpm: number | null, rpd: number | null) {
    return this.read(() => this.limiter.windows(accountId, now, rpm, rpd))
  }
  rowStates(q: { accountId: number; keyId: string | null; now: number; rows: LimitRow[] }) {
    return this.read(() => this.charges.rowStates(q.accountId, q.keyId, q.now, q.rows))
  }
  sweepReservations(before: number) {
    return this.write(() => this.sweepTx(before))
  }
  complete(batch: Completion[]) {
    return this.write(() => this.usage.complete(batch))
  }
  usageSummary(accountId: number, now: number, dayStart: number) {
    return this.read(() => this.usage.summary(accountId, now, dayStart))
  }
  requestLog(filter: RequestLogFilter) {
    return this.read(() => this.log.page(filter))
  }
  requestById(id: number) {
    return this.read(() => this.log.byId(id))
  }
  usageSeries(q: UsageSeriesQuery) {
    return this.read(() => this.rollups.series(q))
  }
  topOfDay(q: TopQuery) {
    return this.read(() => this.overview.top(q))
  }
  recentOutcomes(q: OutcomesQuery) {
    return this.read(() => this.overview.outcomes(q))
  }
  recordRateLimited(batch: RateLimitedEvent[]) {
    return this.write(() => {
      if (batch.length) this.rateLimitedTx(batch)
    })
  }
  recordRefusals(batch: RefusalEvent[]) {
    return this.write(() => {
      if (batch.length) this.refusalsTx(batch)
    })
  }
  refusals(q: RefusalQuery) {
    return this.read(() => this.refusalsQ.list(q))
  }
  pruneHistory(p: RetentionPolicy) {
    return this.write(
      () =>
        this.usage.pruneLog(p) +
        this.limiter.prune(p.logKeepAfter, p.chunk) +
        this.limiter.reserve.prune(p.logKeepAfter, p.chunk) +
        this.rollups.prune(p.hourlyBefore, p.dailyBefore, p.chunk) +
        this.refusalsQ.prune(p.hourlyBefore, p.chunk) +
        this.alerts.prune(p.hourlyBefore, p.chunk),
    )
  }
  createSession(hash: string, s: ConsoleSession, now: number) {
    return this.write(() => this.sessions.create(hash, s, now))
  }
  getSession(hash: string, now: number) {
    return this.read(() => this.sessions.get(hash, now))
  }
  deleteSession(hash: string) {
    return this.write(() => this.sessions.delete(hash))
  }
  listSessions(now: number, limit: number) {
    return this.read(() => this.sessions.list(now, limit))
  }
  endSessions(sel: SessionSelector) {
    return this.write(() => this.sessions.end(sel))
  }
  enqueueAlert(a: NewAlert) {
    return this.write(() => this.alerts.enqueue(a))
  }
  /**
   * Every sender polls this (each process, every `alerts.poll_ms`): an idle poll only reads, so it
   * neither takes the file's write lock from admissions nor waits on it; a due row is claimed under it.
   */
  async claimDeliveries(now: number, leaseMs: number, limit: number) {
    if (!(await this.read(() => this.alerts.anyDue(now)))) return []
    return this.write(() => this.alerts.claim(now, leaseMs, limit))
  }
  deliveryTried(id: number, t: DeliveryTry) {
    return this.write(() => this.alerts.tried(id, t))
  }
  /** Also part of `pruneHistory`, which retention calls. */
  pruneAlerts(before: number, chunk: number) {
    return this.write(() => this.alerts.prune(before, chunk))
  }
  listDeliveries(q: { beforeId: number | null; limit: number }) {
    return this.read(() => this.alerts.list(q.beforeId, q.limit))
  }
  health() {
    return this.guard.health()
  }
  close() {
    this.flushAdmits()
    this.db.close()
  }
}
