/**
 * @module
 * One place that turns the config into stores, for `serve` and every CLI command alike:
 * SQLite (`database.path`, the default) or PostgreSQL (`database.url`) for accounts, usage and
 * admissions; with `limits.redis_url`, admissions move to Redis.
 */
import type { Config } from '../config/index.ts'
import type { AlertStore } from './alert-types.ts'
import type { StoreHealth } from './errors.ts'
import { pgUnavailable } from './postgres/errors.ts'
import { openPostgres, redactUrl } from './postgres/index.ts'
import { RedisLimiter } from './redis/index.ts'
import { openSqliteStore } from './sqlite/index.ts'
import type {
  AccountStore,
  HistoryStore,
  Limiter,
  OverviewStore,
  SessionAdminStore,
  Store,
  UsageStore,
} from './types.ts'

export interface OpenOptions {
  /**
   * Decide admissions at the caller's `now` instead of the engine's clock. Only tests set it
   * (with a manual clock); SQLite always uses the caller's clock, being on one machine.
   */
  callerTime?: boolean
  now?: number
  warn?(message: string, fields?: Record<string, unknown>): void
}

/** Where the data lives, for start-up lines: never a password. */
export function describeDatabase(config: Config): string {
  return config.database.url ? redactUrl(config.database.url) : config.database.path
}

export function openSqliteFromConfig(config: Config, now?: number): Store {
  return openSqliteStore({
    path: config.database.path,
    busyTimeoutMs: config.database.busyTimeoutMs,
    windows: config.windows,
    now,
  })
}

export async function openStores(config: Config, opts: OpenOptions = {}): Promise<Store> {
  if (!config.database.url) return openSqliteFromConfig(config, opts.now)
  const engineTime = !opts.callerTime
  const pg = await openPostgres({
    url: config.database.url,
    poolSize: config.database.poolSize,
    // The bound on one statement, and the client's wait for an answer (postgres/bounded.ts).
    busyTimeoutMs: config.database.busyTimeoutMs,
    windows: config.windows,
    engineTime,
  })
  const limiter = config.limiter.redisUrl
    ? new RedisLimiter({
        url: config.limiter.redisUrl,
        windows: config.windows,
        onUnavailable: config.limiter.onUnavailable,
        engineTime,
        log: pg.usage,
        accounts: pg.accounts,
        warn: opts.warn ?? (() => {}),
      })
    : pg.limiter
  return new ComposedStore(pg.accounts, limiter, pg.usage, pg.history, pg.alerts, pgUnavailable, async () => {
    await limiter.close()
    await pg.close()
  })
}

/**
 * A Store assembled from one part per concern. Engine failures that no retry of the request can
 * fix are mapped once here (`unavailable`), and remembered for `/healthz` until a call succeeds.
 */
export class ComposedStore implements Store {
  private failure: StoreHealth | null = null

  constructor(
    private readonly accounts: AccountStore,
    private readonly limiter: Limiter,
    private readonly usage: UsageStore,
    private readonly history: HistoryStore & OverviewStore & SessionAdminStore,
    private readonly alerts: AlertStore,
    private readonly unavailable: (err: unknown) => (Error & { reason: StoreHealth['reason'] }) | null,
    private readonly closeAll: () => Promise<void>,
  ) {}

  health(): StoreHealth {
    return this.failure ?? { ok: true }
  }

  private async call<T>(p: () => Promise<T>): Promise<T> {
    try {
      const v = await p()
      this.failure = null
      return v
    } catch (err) {
      const u = this.unavailable(err)
      if (!u) throw err
      this.failure = { ok: false, reason: u.reason, detail: u.message }
      throw u
    }
  }

  createAccount: Store['createAccount'] = (a) => this.call(() => this.accounts.createAccount(a))
  getAccount: Store['getAccount'] = (n) => this.call(() => this.accounts.getAccount(n))
  listAccounts: Store['listAccounts'] = (p) => this.call(() => this.accounts.listAccounts(p))
  setAccountPlan: Store['setAccountPlan'] = (id, c, e) =>
    this.call(() => this.accounts.setAccountPlan(id, c, e))
  setAccountEnabled: Store['setAccountEnabled'] = (id, e) =>
    this.call(() => this.accounts.setAccountEnabled(id, e))
  planHistory: Store['planHistory'] = (id) => this.call(() => this.accounts.planHistory(id))
  createKey: Store['createKey'] = (k) => this.call(() => this.accounts.createKey(k))
  findKeyByHash: Store['findKeyByHash'] = (h) => this.call(() => this.accounts.findKeyByHash(h))
  getKey: Store['getKey'] = (id) => this.call(() => this.accounts.getKey(id))
  listKeys: Store['listKeys'] = (a, p) => this.call(() => this.accounts.listKeys(a, p))
  setKeyState: Store['setKeyState'] = (id, s) => this.call(() => this.accounts.setKeyState(id, s))
  rotateKey: Store['rotateKey'] = (id, h, p, n) => this.call(() => this.accounts.rotateKey(id, h, p, n))
  setKeySuspended: Store['setKeySuspended'] = (id, u) => this.call(() => this.accounts.setKeySuspended(id, u))
  authGeneration: Store['authGeneration'] = () => this.call(() => this.accounts.authGeneration())
  admit: Store['admit'] = (i) => this.call(() => this.limiter.admit(i))
  countRejection: Store['countRejection'] = (r) => this.call(() => this.limiter.countRejection(r))
  extend: Store['extend'] = (q) => this.call(() => this.limiter.extend(q))
  windows: Store['windows'] = (a, n, m, d) => this.call(() => this.limiter.windows(a, n, m, d))
  rowStates: Store['rowStates'] = (q) => this.call(() => this.limiter.rowStates(q))
  sweepReservations: Store['sweepReservations'] = (b) =>
    this.call(async () => {
      const swept = await this.limiter.sweepReservations(b)
      // Redis's own reservations the database settled, or never admitted (RedisLimiter.reconcile).
      return swept + ((await this.limiter.reconcile?.(b)) ?? 0)
    })
  setKeyLimits: Store['setKeyLimits'] = (id, l) => this.call(() => this.accounts.setKeyLimits(id, l))
  complete: Store['complete'] = (b) =>
    this.call(async () => {
      await this.usage.complete(b)
      // A limiter outside the database settles after the outcomes are in (Redis).
      if (this.limiter.settle)
        await this.limiter.settle(b.flatMap((c) => (c.settlement ? [c.settlement] : [])))
    })
  usageSummary: Store['usageSummary'] = (a, n, d) => this.call(() => this.usage.usageSummary(a, n, d))
  requestLog: Store['requestLog'] = (f) => this.call(() => this.history.requestLog(f))
  requestById: Store['requestById'] = (id) => this.call(() => this.history.requestById(id))
  usageSeries: Store['usageSeries'] = (q) => this.call(() => this.history.usageSeries(q))
  topOfDay: Store['topOfDay'] = (q) => this.call(() => this.history.topOfDay(q))
  recentOutcomes: Store['recentOutcomes'] = (q) => this.call(() => this.history.recentOutcomes(q))
  recordRateLimited: Store['recordRateLimited'] = (b) => this.call(() => this.history.recordRateLimited(b))
  recordRefusals: Store['recordRefusals'] = (b) => this.call(() => this.history.recordRefusals(b))
  refusals: Store['refusals'] = (q) => this.call(() => this.history.refusals(q))
  // The alert queue's finished rows go with the hourly rollups (alert-types.ts).
  pruneHistory: Store['pruneHistory'] = (p) =>
    this.call(
      async () =>
        (await this.history.pruneHistory(p)) + (await this.alerts.pruneAlerts(p.hourlyBefore, p.chunk)),
    )
  createSession: Store['createSession'] = (h, s, n) => this.call(() => this.history.createSession(h, s, n))
  getSession: Store['getSession'] = (h, n) => this.call(() => this.history.getSession(h, n))
  deleteSession: Store['deleteSession'] = (h) => this.call(() => this.history.deleteSession(h))
  listSessions: Store['listSessions'] = (n, l) => this.call(() => this.history.listSessions(n, l))
  endSessions: Store['endSessions'] = (s) => this.call(() => this.history.endSessions(s))
  enqueueAlert: Store['enqueueAlert'] = (a) => this.call(() => this.alerts.enqueueAlert(a))
  claimDeliveries: Store['claimDeliveries'] = (n, l, c) =>
    this.call(() => this.alerts.claimDeliveries(n, l, c))
  deliveryTried: Store['deliveryTried'] = (id, t) => this.call(() => this.alerts.deliveryTried(id, t))
  listDeliveries: Store['listDeliveries'] = (q) => this.call(() => this.alerts.listDeliveries(q))
  pruneAlerts: Store['pruneAlerts'] = (b, c) => this.call(() => this.alerts.pruneAlerts(b, c))
  close(): Promise<void> {
    return this.closeAll()
  }
}
