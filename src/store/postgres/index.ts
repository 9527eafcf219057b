/**
 * @module
 * The PostgreSQL backend (`database.url`): accounts, usage and — without Redis — admissions.
 * Bun's built-in client (`Bun.SQL`): no dependency to ship inside the single executable, a
 * connection pool, and tagged templates that are always prepared statements with bound values.
 * Every call made while serving is bounded (bounded.ts).
 */
import { SQL } from 'bun'
import type { WindowSpans } from '../../limits/types.ts'
import { PgAccounts } from './accounts.ts'
import { PgAlerts } from './alerts.ts'
import { PgBound, serverTimeouts } from './bounded.ts'
import { redactUrl } from './errors.ts'
import { PgHistory } from './history.ts'
import { PgLimiter } from './limiter.ts'
import { assertSchema, migratePostgres } from './migrations.ts'
import { GrowingPool, IDLE_S } from './pool.ts'
import { PgUsage } from './usage.ts'

export { PG_LATEST_VERSION } from './migrations.ts'

export interface PostgresOptions {
  url: string
  poolSize: number
  windows: WindowSpans
  /** Admissions read the database server's clock (production); false = the caller's `now` (tests). */
  engineTime: boolean
  /** `database.busy_timeout_ms`: the server's bound on one statement (bounded.ts). Default 5,000. */
  busyTimeoutMs?: number
}

export interface PostgresParts {
  accounts: PgAccounts
  limiter: PgLimiter
  usage: PgUsage
  history: PgHistory
  alerts: PgAlerts
  close(): Promise<void>
}

/**
 * One connection (a member of GrowingPool, or `migrate`'s). `busyMs`: bound every statement
 * (serving); none for `migrate`, which may wait for a lock.
 */
function connect(url: string, busyMs?: number): SQL {
  return new SQL(url, {
    max: 1,
    idleTimeout: IDLE_S,
    connectionTimeout: 10,
    ...(busyMs === undefined ? {} : { connection: serverTimeouts(busyMs) }),
  })
}

/** Connects and checks the schema version; refuses a schema this build does not know. */
export async function openPostgres(opts: PostgresOptions): Promise<PostgresParts> {
  const busyMs = opts.busyTimeoutMs ?? 5_000
  const db = new PgBound(() => new GrowingPool(() => connect(opts.url, busyMs), opts.poolSize), busyMs)
  const limiter = new PgLimiter(db, opts.windows, opts.engineTime)
  try {
    await db.pool.use((sql) => assertSchema(sql, `PostgreSQL ${redactUrl(opts.url)}`))
    await limiter.measureClock()
  } catch (err) {
    await db.close()
    throw err
  }
  return {
    accounts: new PgAccounts(db),
    limiter,
    usage: new PgUsage(db),
    history: new PgHistory(db),
    alerts: new PgAlerts(db),
    close: () => db.close(),
  }
}

/** `switchyard migrate`: applies the missing migrations; returns the versions applied. */
export async function migratePostgresUrl(url: string, now: number, target?: number): Promise<number[]> {
  const sql = connect(url)
  try {
    return await migratePostgres(sql, now, target)
  } finally {
    await sql.close()
  }
}
