/**
 * @module
 * Store failures every backend reports the same way, so the server turns them into one
 * response each whatever the engine (`storeError`): 503 `store_busy` (the lock stayed taken
 * past the caller's deadline) and 503 `store_unavailable` (disk full, I/O error, database file
 * gone). Each engine's own errors are mapped onto these by a table of rules (`unavailableBy`).
 */
import { GATEWAY_FAILURE, GatewayError } from '../util/errors.ts'

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

/** Seconds a client should wait after store_unavailable: an operator has to free space first. */
const UNAVAILABLE_RETRY_S = 30

/**
 * The response for a store that cannot answer, or null for any other error: 503 `store_busy`
 * when another writer held the lock past the request's deadline, 503 `store_unavailable` when
 * the disk is full or the database is unusable. Both carry `retry-after`; neither is the
 * client's fault.
 * @example
 * storeError(new StoreBusyError(5000))?.code // 'store_busy'
 */
export function storeError(err: unknown): GatewayError | null {
  if (err instanceof StoreBusyError)
    return new GatewayError(
      503,
      GATEWAY_FAILURE.storeBusy,
      'The gateway is overloaded (its database is busy); retry in a second.',
      {
        type: 'api_error',
        headers: { 'retry-after': '1' },
      },
    )
  if (err instanceof StoreUnavailableError)
    return new GatewayError(
      503,
      GATEWAY_FAILURE.storeUnavailable,
      err.reason === 'disk_full'
        ? 'The gateway cannot record requests: its disk is full. Retry later; the operator has been alerted in the log.'
        : 'The gateway cannot reach its database. Retry later; the operator has been alerted in the log.',
      { type: 'api_error', headers: { 'retry-after': String(UNAVAILABLE_RETRY_S) } },
    )
  return null
}

/** An engine error no retry of the request can fix, known by its code or its SQLSTATE. */
export interface UnavailableRule {
  /** Matches the error's `code` (the driver's, or the socket's). */
  code?: RegExp
  /** Matches the error's SQLSTATE (`errno` on Bun.SQL's errors). */
  sqlState?: RegExp
  reason: UnavailableReason
  /** The message, from the error's code and its own message. */
  detail(code: string, message: string): string
}

/**
 * An engine's mapping onto `StoreUnavailableError`: the first rule that matches decides; an error
 * already mapped is passed on (so `/healthz` records it); anything else is null.
 * @example
 * const unavailable = unavailableBy([{ code: /^SQLITE_FULL$/, reason: 'disk_full', detail: () => 'disk full' }])
 */
export function unavailableBy(
  rules: readonly UnavailableRule[],
): (err: unknown) => StoreUnavailableError | null {
  return (err) => {
    if (err instanceof StoreUnavailableError) return err
    const e = err as { code?: unknown; errno?: unknown; message?: unknown } | null
    const code = String(e?.code ?? '')
    const sqlState = String(e?.errno ?? '')
    const rule = rules.find((r) => r.code?.test(code) || r.sqlState?.test(sqlState))
    return rule ? new StoreUnavailableError(rule.reason, rule.detail(code, String(e?.message ?? code))) : null
  }
}
