/**
 * @module
 * The limiter's contract: what an admission is asked and what it answers. Times are epoch
 * milliseconds. Every backend (SQLite, PostgreSQL, Redis) implements the same semantics: exact
 * sliding windows of `rpm` per minute and `rpd` per day per account, and the suspension policy's
 * refusal count per key, decided in one atomic step.
 */

import type { DearestPrices } from './pricing.ts'
import type { LimitRow, RowState } from './rows.ts'

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
  /** The client-visible `x-request-id` (the client's own when it sent one: it may repeat). */
  requestId: string
  /** The gateway's unique id of this request (newRequestId): the usage row's key. */
  gatewayId: string
  /** The API surface the request came through (chat, messages, responses). */
  surface?: string
  stream: boolean
  now: number
  rpm: number | null
  rpd: number | null
  suspension: SuspensionPolicy | null
  /** Rows beyond the account's request windows, and what this request reserves against them. */
  charge?: ChargeRequest
}

/**
 * A reservation asked for at admission (DESIGN §11): the backend checks `rows` in the same atomic
 * step as the request windows and, if they leave room, charges `inputTokens` plus the output
 * allowance (what is wanted, clamped to what the rows leave; refused below a useful answer) and the
 * reservation's highest cost. Plain numbers: it travels to PostgreSQL and Redis as JSON.
 */
export interface ChargeRequest {
  /** Token, money and key-scoped rows (the account's request rows stay `rpm` / `rpd`). */
  rows: LimitRow[]
  /** The conservative input bound (estimate-tokens.ts). */
  inputTokens: number
  /** Output tokens wanted: the client's max_tokens, else the model's maximum output (allowance.ts). */
  wantOutput: number
  /** The dearest prices among the models that may answer (pricing.ts); null = free. */
  price: DearestPrices | null
}

/** What an admission reserved. */
export interface Reservation {
  /** Tokens charged to the token rows: input bound + output allowance. */
  tokens: number
  /** Micro-dollars charged to the money rows (the reservation's highest cost). */
  micros: number
  /** The output allowance: the max_tokens to send upstream. */
  outputTokens: number
  /** The row that clamped the allowance below what was wanted (`account:tokens:minute` ...), or null. */
  clampedBy: string | null
  /** Every charge row after this admission (headers). */
  states: RowState[]
  /** Identifies the charge for settlement (the backend's own, opaque above it). */
  handle: ChargeHandle
}

/**
 * A backend's handle on a charge: PostgreSQL's and Redis's are the request's gateway id; SQLite's
 * is its charge row's key with what the row holds until settled (kept in memory, never parsed).
 */
export type ChargeHandle = string | object

/** A charge row refused the request. */
export interface ChargeRefusal {
  state: RowState
  /** That row's units the smallest useful version of this request needs. */
  needs: number
  /** When the row will have room (sliding windows), or its period's end; null = never. */
  retryAt: number | null
}

/**
 * Growth of a live reservation (DESIGN §11, `Limiter.extend`): `tokens` more on every token row and
 * `micros` more on every money row the reservation holds, checked against what the rows leave at
 * `now` in one atomic step, exact across processes and replicas like admission. All or nothing: a
 * partial grant would need the price to turn money into tokens inside the engine, and the caller
 * can ask once more for what the returned states say is left.
 */
export interface Extension {
  /** Reservation.handle (SQLite's handle is updated in place: settlement then moves the grown hold). */
  handle: ChargeHandle
  accountId: number
  keyId: string
  /** The rows the reservation was charged to (its ChargeRequest.rows). */
  rows: LimitRow[]
  /** Output tokens to add to the token rows (0 or more). */
  tokens: number
  /** Micro-dollars to add to the money rows (0 or more). */
  micros: number
  now: number
}

/** What an extension granted (all it asked, or 0 and 0), and every row's state after it. */
export interface Extended {
  tokens: number
  micros: number
  /** One per `Extension.rows`, in order; empty when the reservation was settled already. */
  states: RowState[]
}

/**
 * A continued stream's first part (DESIGN §10): the model that began the answer, and the tokens and
 * cost of what it produced. Usage, the rollups and `/metrics` book them to that model and the rest
 * of the request's to the model that finished it (§11 "One ledger": cost belongs to the model that
 * answered); the request log's row keeps the request's whole tokens and cost.
 */
export interface FirstPart {
  /** The prefixed model id (`openai/gpt-4o`). */
  model: string
  promptTokens: number
  completionTokens: number
  costMicros: number
}

/** What the end of a request settles its reservation to. */
export interface Settlement {
  /** Reservation.handle */
  handle: ChargeHandle
  accountId: number
  tokens: number
  micros: number
}

/** `at`: the time the limiter decided at, when it reads its engine's clock rather than `input.now`. */
export type AdmitResult =
  | {
      admitted: true
      /** The usage row's key (`AdmitInput.gatewayId`): outcomes are written by it. */
      gatewayId: string
      minute: WindowLimit
      day: WindowLimit
      at?: number
      /** The request's time in the log (its usage minute), when the backend reports it. */
      loggedAt?: number
      /** Set when the input asked for a charge. */
      reservation?: Reservation
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
      /** Set when a charge row refused (then `window` names its window, `period` as `day`). */
      charge?: ChargeRefusal
    }
