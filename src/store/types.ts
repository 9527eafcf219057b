/**
 * @module
 * The storage interface the rest of the gateway depends on. Times are epoch milliseconds.
 * Methods may return promises so a networked backend (Postgres, Redis) can implement it
 * without touching callers; the SQLite backend answers synchronously inside them.
 *
 * Every method either answers within the backend's wait (`database.busy_timeout_ms`) or
 * rejects with StoreBusyError / StoreUnavailableError (see errors.ts); none blocks the event loop.
 */

import type { KeyCountName } from '../config/limit-settings.ts'
import type { CalendarPeriod, LimitRow, RowState } from '../limits/rows.ts'
import type {
  AdmitInput,
  AdmitResult,
  Extended,
  Extension,
  FirstPart,
  Refusal,
  Settlement,
  WindowLimit,
} from '../limits/types.ts'
import type { AlertStore } from './alert-types.ts'
import type { StoreHealth } from './errors.ts'

// The limiter's contract lives with the rest of the limit logic (src/limits/).
export type { AdmitInput, AdmitResult, Extended, Extension, Refusal, WindowLimit }

import type { HistoryStore } from './history-types.ts'
import type { OverviewStore } from './overview-types.ts'
import type { SessionAdminStore } from './session-types.ts'

export type * from './history-types.ts'
export type * from './overview-types.ts'
export type * from './session-types.ts'

export type KeyState = 'enabled' | 'disabled' | 'revoked'

/**
 * A key's own limits (DESIGN §11), applied within its account's plan; null fields set nothing.
 * `budgetMicros` is integer micro-dollars (USD × 1,000,000) per `budgetPeriod` (UTC calendar);
 * both are set or both null. `models`: the model ids the key may use (null = the plan's all).
 */
export type KeyLimits = { [N in KeyCountName]: number | null } & {
  budgetMicros: number | null
  budgetPeriod: CalendarPeriod | null
  models: string[] | null
}

export interface AccountRecord {
  id: number
  name: string
  plan: string
  enabled: boolean
  planStartedAt: number
  /** null = the plan has no end. */
  planExpiresAt: number | null
  createdAt: number
}

export interface KeyRecord {
  id: string
  accountId: number
  accountName: string
  name: string | null
  prefix: string
  state: KeyState
  createdAt: number
  rotatedAt: number | null
  lastUsedAt: number | null
  suspendedUntil: number | null
  /** null = the key sets no limits of its own (every KeyLimits field null). */
  limits: KeyLimits | null
}

export interface PlanChange {
  plan: string
  startedAt: number
  expiresAt: number | null
  reason: string
  createdAt: number
}

/** A plan and its end, as a conditional plan change expects to find them. */
export interface PlanTerm {
  plan: string
  expiresAt: number | null
}

/** One page of accounts, by id: those after `afterId`, at most `limit`. */
export interface AccountPage {
  afterId: number
  limit: number
}

/** One page of keys, in the order they were made (created_at, then id): those after `after`. */
export interface KeyPage {
  after: { createdAt: number; id: string } | null
  limit: number
}

/** A plan change's outcome: the account as stored now, and whether this change is what made it so. */
export interface PlanWrite {
  account: AccountRecord
  /** false: overtaken (the account was no longer as expected), nothing was written. */
  written: boolean
}

export interface Completion {
  /** The admitted request's gateway id (AdmitResult.gatewayId). */
  gatewayId: string
  /** The client-visible x-request-id (AdmitInput.requestId). */
  requestId: string
  /** The request's surface (chat, messages, responses). */
  surface: string
  stream: boolean
  status: number
  promptTokens: number | null
  completionTokens: number | null
  /** Of `promptTokens`: read from the provider's prompt cache, and written to it (absent: none). */
  cachedTokens?: number
  cacheWriteTokens?: number
  latencyMs: number
  ttftMs: number | null
  errorCode: string | null
  /** What the request cost, integer micro-dollars (null: the model has no pricing, or unknown). */
  costMicros?: number | null
  /** Upstream attempts the request took (DESIGN §10). */
  attempts?: number | null
  /** The model that answered when it was not the admitted one (a fallback). */
  answeredBy?: string | null
  /** A continued stream's first part, booked to its own model; the rest goes to `answeredBy`. */
  firstPart?: FirstPart | null
  /**
   * The tokens and cost are the gateway's settled estimate (no upstream count of the whole answer:
   * a stream the client left, an upstream that cut or sent no usage), not the upstream's usage.
   */
  estimated?: boolean
  /** The admission's reservation settled to what the request used, in the same write as the outcome. */
  settlement?: Settlement
  /**
   * Where the request was counted at admission (account, key, model, and its time in the log:
   * AdmitResult.loggedAt, else the time it was admitted at), so a backend can add the outcome to
   * its counters and write the request's log row without reading anything back.
   */
  counted: { accountId: number; keyId: string; model: string; at: number }
}

export interface UsageTotals {
  requests: number
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  errors: number
  /** Requests whose tokens are the gateway's settled estimate, not the upstream's usage (Completion.estimated). */
  estimated_requests: number
  /** Of `prompt_tokens`: read from the provider's prompt cache (priced at `cached_input`). */
  cached_tokens: number
  /** Of `prompt_tokens`: written to the provider's prompt cache (priced at `cache_write`). */
  cache_write_tokens: number
}

/**
 * Usage is counted per account, model and UTC minute of admission, so a summary costs the same
 * whatever the account's volume (a backend keeps counters; it never scans the request log).
 */
export interface UsageSummary {
  /** Since `dayStart` (UTC midnight). */
  today: UsageTotals
  /** The last 1,440 whole minutes, the current one included. */
  last_24h: UsageTotals
  /** Per model, since `dayStart`. */
  by_model: Record<string, UsageTotals>
  /** Cost in integer micro-dollars of the completed requests, over the same spans as above. */
  cost_micros: { today: number; last_24h: number; by_model: Record<string, number> }
}

export interface NewAccount {
  name: string
  plan: string
  planStartedAt: number
  planExpiresAt: number | null
  now: number
}

/** A key as the store keeps it: its hash, never the key. */
export interface NewKeyRecord {
  id: string
  accountId: number
  name: string | null
  prefix: string
  hash: string
  now: number
  /** The key's own limits; absent or null = none. */
  limits?: KeyLimits | null
}

/** Accounts, keys, plans and plan history. */
export interface AccountStore {
  createAccount(a: NewAccount): Promise<AccountRecord>
  getAccount(nameOrId: string | number): Promise<AccountRecord | null>
  /** Every account by id; with `page`, one page of them (the admin API's list). */
  listAccounts(page?: AccountPage): Promise<AccountRecord[]>
  /**
   * Changes the plan and adds the change to the history, in one transaction. With `expected`, only
   * while the account is still on that plan with that end: otherwise nothing is written and the
   * account comes back as stored, `written: false` (another process's downgrade at expiry, or a
   * renewal or change, has overtaken the read the change was decided on).
   */
  setAccountPlan(id: number, change: PlanChange, expected?: PlanTerm): Promise<PlanWrite>
  setAccountEnabled(id: number, enabled: boolean): Promise<AccountRecord>
  planHistory(accountId: number): Promise<PlanChange[]>

  /** Keys */
  createKey(k: NewKeyRecord): Promise<KeyRecord>
  /** Replaces the key's own limits (null = none); the authentication cache sees it at once. */
  setKeyLimits(id: string, limits: KeyLimits | null): Promise<KeyRecord>
  /** Hot path: the key and its account by the key's hash, in one lookup. */
  findKeyByHash(hash: string): Promise<{ key: KeyRecord; account: AccountRecord } | null>
  getKey(id: string): Promise<KeyRecord | null>
  /** Every key (of one account), oldest first; with `page`, one page of them. */
  listKeys(accountId?: number, page?: KeyPage): Promise<KeyRecord[]>
  setKeyState(id: string, state: KeyState): Promise<KeyRecord>
  rotateKey(id: string, hash: string, prefix: string, now: number): Promise<KeyRecord>
  setKeySuspended(id: string, until: number | null): Promise<KeyRecord>
  /**
   * A number that changes (in the same commit) whenever a write could change what
   * `findKeyByHash` answers, whoever the writer: the authentication cache's validity check.
   */
  authGeneration(): Promise<number>
  close(): void | Promise<void>
}

/** Admission: both windows and the suspension counter in one atomic step. */
export interface Limiter {
  /** Check and consume in one atomic step (exact across processes and replicas sharing the engine). */
  admit(input: AdmitInput): Promise<AdmitResult>
  /**
   * Counts one refusal of the key that `admit` did not see (e.g. an invalid body) toward its
   * suspension, on the same counter `admit` uses for rate-limit refusals. Returns the end of the
   * suspension this refusal started, or null.
   */
  countRejection(refusal: Refusal): Promise<number | null>
  /**
   * Grows a live reservation by `tokens` output tokens and `micros` micro-dollars on every row it
   * holds, all or nothing, in one atomic step with admissions (limits/types.ts `Extension`). A
   * reservation settled already (or swept) grows no more: 0 and 0. Settlement and the sweep then
   * work from the grown hold.
   */
  extend(q: Extension): Promise<Extended>
  windows(
    accountId: number,
    now: number,
    rpm: number | null,
    rpd: number | null,
  ): Promise<{ minute: WindowLimit; day: WindowLimit }>
  /**
   * What each row has used now, without charging anything (for `/v1/usage` and headers): tokens
   * in the rolling window (reservations of requests in flight included), micro-dollars spent in
   * the current calendar period. Any row may be asked for, whatever the plan sets (capacity only
   * sizes `remaining`); key rows need `keyId`.
   */
  rowStates(q: {
    accountId: number
    keyId: string | null
    now: number
    rows: LimitRow[]
  }): Promise<RowState[]>
  /**
   * Settles to themselves (the most each could have cost: the upstream may have answered in full)
   * the reservations made before `before` that were never settled (their process died
   * mid-request); returns how many this call settled. Run with `before` = now − the longest a
   * request can run, so no live request's reservation is swept.
   */
  sweepReservations(before: number): Promise<number>
  /**
   * A limiter outside the database (Redis) settles its reservations here, after the outcomes'
   * batch is written (SQL backends settle inside that batch's transaction instead).
   */
  settle?(items: Settlement[]): Promise<void>
  /**
   * A limiter outside the database (Redis) releases what it still holds for requests the
   * database calls settled, or never admitted, made before `before`; returns how many.
   */
  reconcile?(before: number): Promise<number>
  close(): void | Promise<void>
}

/** Outcomes, tokens and the request log. */
export interface UsageStore {
  /** Usage: admitted requests are recorded by `admit`; their outcome arrives here in batches. */
  complete(batch: Completion[]): Promise<void>
  /** From counters kept by `admit` and `complete`: O(minutes in a day), never O(requests). */
  usageSummary(accountId: number, now: number, dayStart: number): Promise<UsageSummary>
  close(): void | Promise<void>
}

/**
 * Where a limiter outside the database (Redis) records the admissions it made, so usage stays
 * in the shared database: one row per admitted request, written before the request goes upstream.
 */
export interface AdmissionLog {
  /** With what the admission reserved (tokens, micro-dollars): a lost limiter is rebuilt from it. */
  recordAdmitted(input: AdmitInput, at: number, reserved?: { tokens: number; micros: number }): Promise<void>
  /** A reservation grew in the limiter (`Limiter.extend`): its row holds what it holds now. */
  recordGrowth(gatewayId: string, tokens: number, micros: number): Promise<void>
  /** Admissions with a reservation never settled, made before `before` (oldest first, at most `limit`). */
  unsettled(before: number, limit: number): Promise<Array<{ gatewayId: string; accountId: number }>>
  /**
   * Marks these reservations settled in the log (the amounts are the limiter's to move); returns
   * the handles this call marked (not those another marked first).
   */
  markSettled(items: Settlement[]): Promise<string[]>
  /** Admitted requests since `since` (ms epoch), for windows the limiter does not track. */
  countSince(accountId: number, since: number): Promise<number>
  /** Tokens charged to the account's (or one key's) rows since `since`, and the oldest such row's time. */
  tokensSince(
    accountId: number,
    keyId: string | null,
    since: number,
  ): Promise<{ used: number; first: number | null }>
  /** What the database holds of one account's charges: a limiter that lost its state is rebuilt from it. */
  chargeHistory(q: ChargeHistoryQuery): Promise<ChargeHistory>
  /** The admission rows of these handles; a handle missing from the map was never admitted. */
  admissionsByHandle(
    handles: string[],
  ): Promise<Map<string, { settled: boolean; tokens: number; micros: number }>>
}

export interface ChargeHistoryQuery {
  accountId: number
  now: number
  /** The request log: admissions after `logSince`, the latest `logLimit` (0 = none). */
  logSince: number
  logLimit: number
  /** Settled rows are summed per bucket of these widths (the minute's and the day's windows). */
  minuteMs: number
  dayMs: number
  minuteBucketMs: number
  dayBucketMs: number
  /** Calendar periods holding `now`: period → start. */
  periods: Record<'day' | 'week' | 'month', number>
}

export interface ChargeHistory {
  /** Admission times, oldest first. */
  log: number[]
  /** Settled admissions per key and bucket: requests, tokens and the bucket's latest time. */
  buckets: Array<{ keyId: string; window: 'minute' | 'day'; at: number; requests: number; tokens: number }>
  /** Micro-dollars charged per key and period (reservations in flight at their reserved cost). */
  spend: Array<{ keyId: string; period: 'day' | 'week' | 'month'; micros: number }>
  /** Reservations not settled yet (made within two days), at what they reserved. */
  open: Array<{ handle: string; keyId: string; at: number; tokens: number; micros: number }>
}

export interface Store
  extends AccountStore,
    AlertStore,
    Limiter,
    UsageStore,
    HistoryStore,
    OverviewStore,
    SessionAdminStore {
  /** Cheap and lock-free (every `/healthz` calls it): disk full, database file lost. */
  health(): StoreHealth
  /**
   * ms the last `complete` held the database's write lock off the event loop (a serving SQLite
   * store's writer thread: src/store/sqlite/usage-writer.ts); absent or null where the write's
   * cost is what it holds the loop, or a network round trip (PostgreSQL). The usage recorder
   * paces its pieces on it.
   */
  usageWriteMs?(): number | null

  close(): void | Promise<void>
}
