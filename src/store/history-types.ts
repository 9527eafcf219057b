/**
 * @module
 * What the console and the admin API read from the store beyond accounts and limits: the request
 * log (filtered, cursor-paginated), usage over time from hourly and daily rollups, retention, and
 * console sessions. A networked backend implements the same methods; times are epoch ms.
 */

export interface RequestLogFilter {
  accountId?: number
  keyId?: string
  model?: string
  surface?: string
  /** An exact status, or a class: 200–299 is `{ statusMin: 200, statusMax: 299 }`. */
  status?: number
  statusMin?: number
  statusMax?: number
  /** created_at >= from, created_at < to. */
  from?: number
  to?: number
  /** Continue after this position (exclusive), newest first. */
  cursor?: { at: number; id: number }
  limit: number
}

export interface RequestLogRow {
  id: number
  /** The gateway's unique id of the request (the usage row's key). */
  gatewayId: string
  /** The x-request-id the client saw: its own when it sent one (which may repeat). */
  requestId: string
  accountId: number
  accountName: string | null
  keyId: string
  model: string
  surface: string
  stream: boolean
  createdAt: number
  /** null while the request is in flight (or if its outcome was lost in a crash). */
  status: number | null
  promptTokens: number | null
  completionTokens: number | null
  latencyMs: number | null
  ttftMs: number | null
  errorCode: string | null
  /** Integer micro-dollars; null when the model has no pricing or the outcome is not known. */
  costMicros: number | null
  /** Upstream attempts (DESIGN §10); null when none were made or the row predates them. */
  attempts: number | null
  /** The model that answered when not the one asked for (a fallback). */
  answeredBy: string | null
  /** The tokens and cost are the gateway's settled estimate, not the upstream's usage (DESIGN §11). */
  estimated: boolean
}

export interface RequestLogPage {
  rows: RequestLogRow[]
  /**
   * Where the next page starts; null at the end. A page may hold fewer than `limit` rows and
   * still have a cursor: each page scans a bounded number of index entries, so a rare filter
   * combination answers quickly with a partial page instead of scanning the whole log.
   */
  next: { at: number; id: number } | null
}

export type Bucket = 'hour' | 'day'
export type SeriesGroup = 'none' | 'account' | 'key' | 'model' | 'surface'

export interface UsageSeriesQuery {
  bucket: Bucket
  from: number
  to: number
  accountId?: number
  keyId?: string
  model?: string
  groupBy: SeriesGroup
}

export interface UsagePoint {
  /** Bucket start (UTC hour or UTC day), epoch ms. */
  t: number
  requests: number
  prompt_tokens: number
  completion_tokens: number
  errors: number
  rate_limited: number
  latency_ms_sum: number
  /** Integer micro-dollars. */
  cost_micros: number
  /** Of `prompt_tokens`: read from the provider's prompt cache, and written to it. */
  cached_tokens: number
  cache_write_tokens: number
}

export interface UsageSeries {
  /** The group's value (model id, account id, key id, surface) or 'all'. */
  group: string
  points: UsagePoint[]
}

/** A request refused for a rate limit: counted in the rollups (it has no request-log row). */
export interface RateLimitedEvent {
  accountId: number
  keyId: string
  model: string
  surface: string
  at: number
}

/**
 * A request the gateway refused before admission, its key known (a 4xx: 400, 403
 * `model_not_in_plan`, 404, 408, 413, 415, 429 …). Counted per key, code and UTC hour in
 * `refusals_hourly` — bounded by keys × codes × hours kept, whatever the flood — so "I keep
 * getting 429" can be looked up per key. Refusals without a valid key (401) are not per key.
 */
export interface RefusalEvent {
  accountId: number
  keyId: string
  code: string
  status: number
  at: number
  /** How many (the recorder adds up equal events between flushes). */
  count: number
}

export interface RefusalCount {
  /** The UTC hour (ms epoch) the refusals fell in. */
  t: number
  accountId: number
  keyId: string
  code: string
  status: number
  count: number
}

/** `t >= from`, `t < to`; one key, one account, or all. */
export interface RefusalQuery {
  from: number
  to: number
  keyId?: string
  accountId?: number
}

export interface RetentionPolicy {
  /** Request-log rows created before this go. */
  logBefore: number
  /** Beyond this many rows the oldest go too ... */
  logMaxRows: number
  /** ... but never rows created at or after this (the limiter's day window reads them). */
  logKeepAfter: number
  /**
   * Nor, on PostgreSQL, rows that carry a charge (`charge_micros` > 0) created at or after this:
   * with Redis, a budget's spend in the current periods is rebuilt from them (redis/rebuild.ts).
   * Absent: no row is kept for it.
   */
  chargesKeepAfter?: number
  hourlyBefore: number
  dailyBefore: number
  /** Rows deleted per call, so one call never holds the write lock for long. */
  chunk: number
}

export interface ConsoleSession {
  kind: 'admin' | 'key'
  /** The key a key holder signed in with; null for the admin. */
  keyId: string | null
  expiresAt: number
  /**
   * What the session is bound to: a digest of the credential it was opened with (see
   * `console/session-binding.ts`); null for a session from before sessions were bound.
   */
  binding: string | null
}

export interface HistoryStore {
  requestLog(filter: RequestLogFilter): Promise<RequestLogPage>
  requestById(id: number): Promise<RequestLogRow | null>
  usageSeries(q: UsageSeriesQuery): Promise<UsageSeries[]>
  recordRateLimited(batch: RateLimitedEvent[]): Promise<void>
  recordRefusals(batch: RefusalEvent[]): Promise<void>
  /** Refusal counts per key, code and hour, oldest hour first. */
  refusals(q: RefusalQuery): Promise<RefusalCount[]>
  /** Deletes at most `chunk` rows per table; resolves to how many went (0 = nothing left). */
  pruneHistory(p: RetentionPolicy): Promise<number>

  /** Sessions are stored by the hash of their token. */
  createSession(hash: string, s: ConsoleSession, now: number): Promise<void>
  getSession(hash: string, now: number): Promise<ConsoleSession | null>
  deleteSession(hash: string): Promise<void>
}
