/**
 * @module
 * Hourly and daily usage rollups, one row per (bucket, account, key, model, surface), kept up to
 * date as outcomes are written, so usage over time is answered from a few thousand rows however
 * many requests there were, and outlives the raw request log. Buckets are UTC hours and days.
 */
import type { Database } from 'bun:sqlite'
import { type SeriesRow, toSeries } from '../history-series.ts'
import type { RateLimitedEvent, SeriesGroup, UsageSeries, UsageSeriesQuery } from '../types.ts'

const HOUR = 3_600_000
const DAY = 86_400_000

type Params = [
  string | number,
  number,
  string,
  string,
  string,
  number,
  number,
  number,
  number,
  number,
  number,
]

const GROUP_COLUMN: Record<SeriesGroup, string> = {
  none: "'all'",
  account: 'CAST(account_id AS TEXT)',
  key: 'key_id',
  model: 'model',
  surface: 'surface',
}

export interface RollupFact {
  at: number
  accountId: number
  keyId: string
  model: string
  surface: string
  requests: number
  promptTokens: number
  completionTokens: number
  errors: number
  rateLimited: number
  latencyMs: number
}

export class RollupQueries {
  private readonly upserts

  constructor(private readonly db: Database) {
    const upsert = (table: string) =>
      db.query<null, Params>(
        `INSERT INTO ${table} (t, account_id, key_id, model, surface, requests, prompt_tokens,
           completion_tokens, errors, rate_limited, latency_ms_sum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET requests = requests + excluded.requests,
           prompt_tokens = prompt_tokens + excluded.prompt_tokens,
           completion_tokens = completion_tokens + excluded.completion_tokens,
           errors = errors + excluded.errors, rate_limited = rate_limited + excluded.rate_limited,
           latency_ms_sum = latency_ms_sum + excluded.latency_ms_sum`,
      )
    this.upserts = { hourly: upsert('usage_hourly'), daily: upsert('usage_daily') }
  }

  /** Call inside the caller's write transaction. */
  add(f: RollupFact): void {
    const rest = [
      f.accountId,
      f.keyId,
      f.model,
      f.surface,
      f.requests,
      f.promptTokens,
      f.completionTokens,
      f.errors,
      f.rateLimited,
      f.latencyMs,
    ] as const
    this.upserts.hourly.run(f.at - (f.at % HOUR), ...rest)
    this.upserts.daily.run(f.at - (f.at % DAY), ...rest)
  }

  addRateLimited(e: RateLimitedEvent): void {
    this.add({
      at: e.at,
      accountId: e.accountId,
      keyId: e.keyId,
      model: e.model,
      surface: e.surface,
      requests: 0,
      promptTokens: 0,
      completionTokens: 0,
      errors: 0,
      rateLimited: 1,
      latencyMs: 0,
    })
  }

  series(q: UsageSeriesQuery): UsageSeries[] {
    const step = q.bucket === 'hour' ? HOUR : DAY
    const table = q.bucket === 'hour' ? 'usage_hourly' : 'usage_daily'
    const from = q.from - (q.from % step)
    const conds = ['t >= ?', 't < ?']
    const params: Array<string | number> = [from, q.to]
    let index = ''
    if (q.keyId !== undefined) {
      conds.push('key_id = ?')
      params.push(q.keyId)
      index = `INDEXED BY ${table}_key`
    } else if (q.accountId !== undefined) {
      conds.push('account_id = ?')
      params.push(q.accountId)
      index = `INDEXED BY ${table}_account`
    }
    if (q.model !== undefined) {
      conds.push('model = ?')
      params.push(q.model)
    }
    const rows = this.db
      .query<SeriesRow, Array<string | number>>(
        `SELECT t, ${GROUP_COLUMN[q.groupBy]} AS g, SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens,
           SUM(completion_tokens) AS completion_tokens, SUM(errors) AS errors, SUM(rate_limited) AS rate_limited,
           SUM(latency_ms_sum) AS latency_ms_sum
         FROM ${table} ${index} WHERE ${conds.join(' AND ')} GROUP BY t, g ORDER BY t`,
      )
      .all(...params)
    return toSeries(rows, from, q.to, step)
  }

  /** Deletes up to `chunk` rows older than each cutoff; returns how many went. */
  prune(hourlyBefore: number, dailyBefore: number, chunk: number): number {
    let n = 0
    for (const [table, before] of [
      ['usage_hourly', hourlyBefore],
      ['usage_daily', dailyBefore],
    ] as const) {
      n += this.db
        .query<null, [number, number]>(
          `DELETE FROM ${table} WHERE (t, account_id, key_id, model, surface) IN
             (SELECT t, account_id, key_id, model, surface FROM ${table} WHERE t < ? LIMIT ?)`,
        )
        .run(before, chunk).changes
    }
    return n
  }
}
