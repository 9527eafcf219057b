/**
 * @module
 * The limiter's contract: what an admission is asked and what it answers. Times are epoch
 * milliseconds. Every backend (SQLite, PostgreSQL, Redis) implements the same semantics: exact
 * sliding windows of `rpm` per minute and `rpd` per day per account, and the suspension policy's
 * refusal count per key, decided in one atomic step.
 */

/** Window lengths; 60 s and 24 h unless the operator shortens them (tests do). */
export interface WindowSpans {
  minuteMs: number
  dayMs: number
}

export const DEFAULT_SPANS: WindowSpans = { minuteMs: 60_000, dayMs: 86_400_000 }

/** More than `maxRejections` refusals in a fixed window of `windowMs` suspends the key for `durationMs`. */
export interface SuspensionPolicy {
  maxRejections: number
  windowMs: number
  durationMs: number
}

/** A refusal the limiter did not make itself (e.g. an invalid body), counted toward suspension. */
export interface Refusal {
  accountId: number
  keyId: string
  now: number
  suspension: SuspensionPolicy
}

export interface WindowLimit {
  /** null = no limit. */
  limit: number | null
  used: number
  /** null when unlimited. */
  remaining: number | null
  /** When the oldest request in the window leaves it (ms epoch); null when the window is empty. */
  resetAt: number | null
}

export interface AdmitInput {
  accountId: number
  keyId: string
  model: string
  requestId: string
  /** The API surface the request came through (chat, messages, responses). */
  surface?: string
  stream: boolean
  now: number
  rpm: number | null
  rpd: number | null
  suspension: SuspensionPolicy | null
}

/** `at`: the time the limiter decided at, when it reads its engine's clock rather than `input.now`. */
export type AdmitResult =
  | {
      admitted: true
      usageId: number
      minute: WindowLimit
      day: WindowLimit
      at?: number
      /** The request's time in the log (its usage minute), when the backend reports it. */
      loggedAt?: number
    }
  | {
      admitted: false
      at?: number
      window: 'minute' | 'day'
      /** When a request would be admitted again (ms epoch). */
      retryAt: number
      minute: WindowLimit
      day: WindowLimit
      /** Set when this rejection suspended the key. */
      suspendedUntil: number | null
    }
