/**
 * @module
 * One place that turns the config into stores, for `serve` and every CLI command alike:
 * SQLite (`database.path`, the default) or PostgreSQL (`database.url`) for accounts, usage and
 * admissions; with `limits.redis_url`, admissions move to Redis.
 */
import type { Config } from '../config/index.ts'
import { composeStore, failureMemo } from './compose.ts'
import { pgUnavailable, redactUrl } from './postgres/errors.ts'
import { openSqliteStore } from './sqlite/index.ts'
import type { Store } from './types.ts'

export interface OpenOptions {
  /**
   * Decide admissions at the caller's `now` instead of the engine's clock. Only tests set it
   * (with a manual clock); SQLite always uses the caller's clock, being on one machine.
   */
  callerTime?: boolean
  now?: number
  warn?(message: string, fields?: Record<string, unknown>): void
  /** SQLite: a failed thread (the usage writer's), its work moved to the event loop. */
  error?(message: string, fields?: Record<string, unknown>): void
  /** SQLite: WAL checkpoints in a thread of their own, off the event loop (`serve` sets it). */
  checkpointInThread?: boolean
}

/** Where the data lives, for start-up lines: never a password. */
export function describeDatabase(config: Config): string {
  return config.database.url ? redactUrl(config.database.url) : config.database.path
}

export function openSqliteFromConfig(config: Config, opts: OpenOptions = {}): Store {
  return openSqliteStore({
    path: config.database.path,
    busyTimeoutMs: config.database.busyTimeoutMs,
    windows: config.windows,
    now: opts.now,
    checkpointInThread: opts.checkpointInThread,
    error: opts.error,
  })
}

export async function openStores(config: Config, opts: OpenOptions = {}): Promise<Store> {
  if (!config.database.url) return openSqliteFromConfig(config, opts)
  // PostgreSQL's and Redis's modules are loaded only by a config that names them: a SQLite
  // gateway (the default) does not evaluate them at every start (~30 ms of CPU, stop 62).
  const { openPostgres } = await import('./postgres/index.ts')
  const redisUrl = config.limiter.redisUrl
  const { RedisLimiter } = redisUrl ? await import('./redis/index.ts') : { RedisLimiter: null }
  const engineTime = !opts.callerTime
  const pg = await openPostgres({
    url: config.database.url,
    poolSize: config.database.poolSize,
    // The bound on one statement, and the client's wait for an answer (postgres/bounded.ts).
    busyTimeoutMs: config.database.busyTimeoutMs,
    windows: config.windows,
    engineTime,
  })
  const limiter =
    RedisLimiter && redisUrl
      ? new RedisLimiter({
          url: redisUrl,
          windows: config.windows,
          onUnavailable: config.limiter.onUnavailable,
          engineTime,
          log: pg.usage,
          accounts: pg.accounts,
          warn: opts.warn ?? (() => {}),
        })
      : pg.limiter
  const parts = { accounts: pg.accounts, limiter, usage: pg.usage, history: pg.history, alerts: pg.alerts }
  return composeStore(parts, {
    // Engine failures that no retry can fix, remembered for `/healthz` until a call succeeds.
    ...failureMemo(pgUnavailable),
    async close() {
      await limiter.close()
      await pg.close()
    },
  })
}
