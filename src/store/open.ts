/**
 * @module
 * One place that turns the config into stores, for `serve` and every CLI command alike:
 * SQLite (`database.path`, the default) or PostgreSQL (`database.url`) for accounts, usage and
 * admissions; with `limits.redis_url`, admissions move to Redis.
 */
import type { Config } from '../config/index.ts'
import { openPostgres, redactUrl } from './postgres/index.ts'
import { RedisLimiter } from './redis/index.ts'
import { openSqliteStore } from './sqlite/index.ts'
import type { AccountStore, Limiter, Store, UsageStore } from './types.ts'

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
  return new ComposedStore(pg.accounts, limiter, pg.usage, async () => {
    await limiter.close()
    await pg.close()
  })
}

/** A Store assembled from one part per concern. */
export class ComposedStore implements Store {
  constructor(
    readonly accounts: AccountStore,
    readonly limiter: Limiter,
    readonly usage: UsageStore,
    private readonly closeAll: () => Promise<void>,
  ) {}

  createAccount: Store['createAccount'] = (a) => this.accounts.createAccount(a)
  getAccount: Store['getAccount'] = (n) => this.accounts.getAccount(n)
  listAccounts: Store['listAccounts'] = () => this.accounts.listAccounts()
  setAccountPlan: Store['setAccountPlan'] = (id, c) => this.accounts.setAccountPlan(id, c)
  setAccountEnabled: Store['setAccountEnabled'] = (id, e) => this.accounts.setAccountEnabled(id, e)
  planHistory: Store['planHistory'] = (id) => this.accounts.planHistory(id)
  createKey: Store['createKey'] = (k) => this.accounts.createKey(k)
  findKeyByHash: Store['findKeyByHash'] = (h) => this.accounts.findKeyByHash(h)
  getKey: Store['getKey'] = (id) => this.accounts.getKey(id)
  listKeys: Store['listKeys'] = (a) => this.accounts.listKeys(a)
  setKeyState: Store['setKeyState'] = (id, s) => this.accounts.setKeyState(id, s)
  rotateKey: Store['rotateKey'] = (id, h, p, n) => this.accounts.rotateKey(id, h, p, n)
  setKeySuspended: Store['setKeySuspended'] = (id, u) => this.accounts.setKeySuspended(id, u)
  admit: Store['admit'] = (i) => this.limiter.admit(i)
  windows: Store['windows'] = (a, n, m, d) => this.limiter.windows(a, n, m, d)
  complete: Store['complete'] = (b) => this.usage.complete(b)
  usageSummary: Store['usageSummary'] = (a, n, d) => this.usage.usageSummary(a, n, d)
  prune: Store['prune'] = (b) => this.usage.prune(b)
  close(): Promise<void> {
    return this.closeAll()
  }
}
