/**
 * @module
 * Maps PostgreSQL failures onto the store's error classes: a lost or refused connection, or a
 * server that is shutting down or out of resources, is `StoreUnavailableError` (503
 * `store_unavailable`), never a 500.
 */
import { StoreUnavailableError } from '../errors.ts'

export function pgUnavailable(err: unknown): StoreUnavailableError | null {
  // Already decided (a call past its deadline, bounded.ts): passed on, so /healthz records it.
  if (err instanceof StoreUnavailableError) return err
  const e = err as { code?: unknown; errno?: unknown; message?: unknown }
  const code = String(e?.code ?? '')
  const sqlState = String(e?.errno ?? '')
  // Bun.SQL's own codes for connection trouble, the socket's, and SQLSTATE classes 08 (connection
  // exception), 53 (insufficient resources), 57P (operator intervention: shutdown, crash).
  if (
    /^ERR_POSTGRES_(CONNECTION|SERVER_CLOSED|IDLE_TIMEOUT|LIFETIME|TLS)/.test(code) ||
    /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH)$/.test(code) ||
    /^(08|53|57P)/.test(sqlState)
  ) {
    return new StoreUnavailableError('io_error', `PostgreSQL unavailable: ${String(e?.message ?? code)}`)
  }
  return null
}
