/**
 * @module
 * Store failures every backend reports the same way, so the server turns them into one
 * response each whatever the engine: 503 `store_busy` (the lock stayed taken past the caller's
 * deadline) and 503 `store_unavailable` (disk full, I/O error, database file gone).
 */

/**
 * Another writer held the lock until this caller's deadline, or the engine rolled the call back
 * for a conflict with another transaction (`detail` says which). Retrying soon is expected to work.
 */
export class StoreBusyError extends Error {
  constructor(
    readonly waitedMs: number,
    detail?: string,
  ) {
    super(detail ?? `the database stayed locked for ${Math.round(waitedMs)} ms`)
    this.name = 'StoreBusyError'
  }
}

/**
 * The outcomes are stored but a limiter outside the database (Redis) did not take their
 * settlements: the batch is retried (both steps settle each reservation once).
 */
export class SettlementPendingError extends Error {
  constructor(detail: string) {
    super(detail)
    this.name = 'SettlementPendingError'
  }
}

export type UnavailableReason = 'disk_full' | 'io_error' | 'file_lost'

/** The store cannot serve writes (or reads) until an operator acts. */
export class StoreUnavailableError extends Error {
  constructor(
    readonly reason: UnavailableReason,
    detail: string,
  ) {
    super(detail)
    this.name = 'StoreUnavailableError'
  }
}

/** What `/healthz` reports about the store; computed without taking any lock. */
export interface StoreHealth {
  ok: boolean
  /** Why it is unhealthy. */
  reason?: UnavailableReason
  detail?: string
  /** The condition will not clear while this process runs (the database file is gone). */
  fatal?: boolean
}
