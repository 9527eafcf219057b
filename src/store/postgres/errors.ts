/**
 * @module
 * Maps PostgreSQL failures onto the store's error classes: a lost or refused connection, or a
 * server that is shutting down or out of resources, is `StoreUnavailableError` (503
 * `store_unavailable`), never a 500. A call past its deadline (bounded.ts) is mapped already.
 * Also `redactUrl`, a URL without its password for messages (here, not in index.ts, so that naming
 * the database does not load the PostgreSQL store: store/open.ts loads it only when used).
 */
import { type UnavailableRule, unavailableBy } from '../errors.ts'

const gone = (_code: string, message: string) => `PostgreSQL unavailable: ${message}`

/**
 * Bun.SQL's own codes for connection trouble, the socket's, and SQLSTATE classes 08 (connection
 * exception), 53 (insufficient resources), 57P (operator intervention: shutdown, crash).
 */
const RULES: UnavailableRule[] = [
  {
    code: /^ERR_POSTGRES_(CONNECTION|SERVER_CLOSED|IDLE_TIMEOUT|LIFETIME|TLS)/,
    reason: 'io_error',
    detail: gone,
  },
  {
    code: /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH)$/,
    reason: 'io_error',
    detail: gone,
  },
  { sqlState: /^(08|53|57P)/, reason: 'io_error', detail: gone },
]

export const pgUnavailable = unavailableBy(RULES)

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'the configured database URL'
  }
}
