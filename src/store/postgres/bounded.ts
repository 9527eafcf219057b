/**
 * @module
 * A bound on every PostgreSQL call the gateway makes while serving (README "Several replicas",
 * failure table). Two halves, because a server can fail to answer in two ways:
 * - it answers, but slowly (a held row lock, a long statement): the server itself cancels any
 *   statement after `database.busy_timeout_ms` — lock waits included — and ends a transaction
 *   left idle that long (`serverTimeouts`) → `StoreBusyError`, 503 `store_busy`;
 * - it does not answer at all (stopped, or blackholed by a failover): the client gives up
 *   `CLIENT_MARGIN_MS` later and closes that connection — never returns it to the pool, where
 *   the next call would queue behind a query the server may still be holding →
 *   `StoreUnavailableError`, 503 `store_unavailable`.
 * A transaction the server rolled back for a conflict with another (a deadlock, a serialization
 * failure) is `StoreBusyError` too: nothing of it committed, and running it again is expected to
 * work — the usage flush puts its batch back. So is one admission of a group commit rolled back
 * alone for one (admit-batch.ts reads its SQLSTATE back, schema v15).
 */
import type { SQL } from 'bun'
import { StoreBusyError, StoreUnavailableError } from '../errors.ts'
import type { GrowingPool } from './pool.ts'

/** Time for the server's own cancellation to arrive before the client gives up on the server. */
export const CLIENT_MARGIN_MS = 1_000

/** Runtime parameters every serving connection opens with (not `migrate`'s: it may wait long). */
export function serverTimeouts(busyMs: number): Record<string, number> {
  // No lock_timeout: statement_timeout already bounds lock waits (a lock timeout inside
  // switchyard_admit_batch is caught per item — EXCEPTION WHEN OTHERS — and read back from its
  // SQLSTATE, v15; a cancelled statement is not caught there: plpgsql's OTHERS excludes QUERY_CANCELED).
  return { statement_timeout: busyMs, idle_in_transaction_session_timeout: busyMs }
}

/** SQLSTATEs that mean "the server is busy", not "the server is gone". */
const BUSY = new Set([
  '57014', // query_canceled: statement_timeout (lock waits included)
  '55P03', // lock_not_available: a lock_timeout the operator set on the database
  '25P03', // idle_in_transaction_session_timeout
])

/**
 * Class 40's two that a retry fixes (not 40002, a deferred constraint that fails again, nor
 * 40003, an unknown outcome): the server rolled the whole transaction back for a conflict with
 * another one — nothing of it committed — and PostgreSQL's advice is to run it again. Two
 * replicas' usage flushes can lock the same rows in different orders (the hourly and daily
 * rollups are upserted by groups, not sorted); a serializable transaction (none of ours, but an
 * operator's `default_transaction_isolation`) can fail to serialize.
 */
const CONFLICT = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
])

/** What the admission statement raises past its deadline (admit-batch.ts). */
export const PAST_DEADLINE = 'switchyard: admission past its deadline'

/**
 * The store's error for a PostgreSQL failure with SQLSTATE `state` that a retry is expected to
 * fix — the server busy, or `what` rolled back for a conflict — else null. One classification for
 * a failed call (`PgBound.run`) and for one admission that failed alone inside a group commit
 * (admit-batch.ts: the call succeeded, the item's subtransaction was rolled back).
 * @example
 * pgBusy('40P01', 'deadlock detected', 12, 'the admission') // StoreBusyError, its message naming 40P01
 */
export function pgBusy(
  state: string,
  message: string,
  waitedMs: number,
  what = 'the transaction',
): StoreBusyError | null {
  if (BUSY.has(state)) return new StoreBusyError(waitedMs)
  if (CONFLICT.has(state))
    return new StoreBusyError(
      waitedMs,
      `PostgreSQL rolled ${what} back (${state}: ${message}); retrying it is expected to work`,
    )
  return null
}

function busy(err: unknown, waitedMs: number): StoreBusyError | null {
  const e = err as { errno?: unknown; message?: unknown }
  const message = String(e?.message ?? '')
  return (
    pgBusy(String(e?.errno ?? ''), message, waitedMs) ??
    (message.includes(PAST_DEADLINE) ? new StoreBusyError(waitedMs) : null)
  )
}

/** A server that did not answer within `deadlineMs`: its pool's connections were closed. */
const gone = (deadlineMs: number): StoreUnavailableError =>
  new StoreUnavailableError(
    'io_error',
    `PostgreSQL did not answer within ${deadlineMs} ms; its connections were closed`,
  )

export class PgBound {
  /** The connections calls run on; replaced when the server stops answering (`run`). */
  pool: GrowingPool

  constructor(
    /** Makes a pool (the same URL and options each time). */
    private readonly connect: () => GrowingPool,
    /** `database.busy_timeout_ms`: the server's bound on one statement. */
    readonly busyMs: number,
  ) {
    this.pool = connect()
  }

  /** How long a call may take, as the client counts it, before its pool is given up. */
  get deadlineMs(): number {
    return this.busyMs + CLIENT_MARGIN_MS
  }

  /**
   * Runs `fn` on one connection of the pool (pool.ts) within the deadline. Past it the server is taken for gone (stopped,
   * blackholed by a failover): the caller gets `StoreUnavailableError` (so do the calls still waiting
   * for one of that pool's connections, or running on one), and the pool is replaced —
   * its connections closed, never left to queue the next calls behind queries the server may
   * still hold; the new one connects afresh (to whatever host the name now points at). The
   * connection is the pool's choice, not one taken with Bun's `reserve()`: a reservation cost
   * 140–200 µs a call one at a time (measured, admissions 300 → 440–500 µs).
   * @example
   * const rows = await db.run((sql) => sql`SELECT n FROM auth_generation WHERE id = 1`)
   */
  async run<T>(fn: (sql: SQL) => Promise<T>): Promise<T> {
    const started = performance.now()
    const pool = this.pool
    let timer: ReturnType<typeof setTimeout> | undefined
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(gone(this.deadlineMs))
        this.replace(pool)
      }, this.deadlineMs)
    })
    expired.catch(() => {})
    try {
      const work = pool.use(fn)
      // After the deadline it settles on a closed connection, with nobody waiting for it.
      work.catch(() => {})
      return await Promise.race([work, expired])
    } catch (err) {
      const waited = performance.now() - started
      // Its pool was given up at another call's deadline (the server taken for gone): a call still
      // waiting for a connection there, or running on one, failed with it — as unavailable as that one.
      throw busy(err, waited) ?? (pool !== this.pool ? gone(this.deadlineMs) : err)
    } finally {
      clearTimeout(timer)
    }
  }

  /** Gives up `pool` (once, whichever call's deadline passed first) for a fresh one. */
  private replace(pool: GrowingPool): void {
    if (this.pool !== pool) return
    this.pool = this.connect()
    pool.close({ timeout: 0 }).catch(() => {})
  }

  close(): Promise<void> {
    return this.pool.close()
  }
}
