/**
 * @module
 * What the console's overview reads from the store besides usage over time: today's busiest keys
 * or accounts (from the daily rollups), and the outcomes of the newest requests per model and
 * error code (from the request log, at most a fixed number of rows read), which the admin API
 * turns into each provider's health. Times are epoch ms.
 */

export interface TopQuery {
  /** The UTC day's start (a daily rollup bucket). */
  day: number
  by: 'key' | 'account'
  limit: number
}

export interface TopRow {
  /** The key id, or the account id as text. */
  id: string
  /** The key's account (for `by: 'account'`, the account itself). */
  accountId: number
  requests: number
  tokens: number
  errors: number
  rateLimited: number
}

export interface OutcomesQuery {
  from: number
  to: number
  /** Read at most this many request-log rows, newest first. */
  scan: number
}

export interface OutcomeRow {
  model: string
  /** null for a request whose outcome was lost. */
  status: number | null
  errorCode: string | null
  /** The model that answered or failed last when not the one asked for (a fallback), else null. */
  answeredBy: string | null
  /** A 503 `upstream_circuit_open` with no upstream called: the gateway's refusal. */
  refused: boolean
  count: number
  /** The newest and oldest such request among the rows read. */
  lastAt: number
  firstAt: number
}

export interface OverviewStore {
  /** Busiest first (requests and 429s together), at most `limit` rows. */
  topOfDay(q: TopQuery): Promise<TopRow[]>
  /** The newest `scan` requests in [from, to), counted by model, answering model, status, error code and refusal. */
  recentOutcomes(q: OutcomesQuery): Promise<OutcomeRow[]>
}
