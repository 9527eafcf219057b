/**
 * @module
 * Hourly and daily usage rollups, one row per (bucket, account, key, model, surface), kept up to
 * date as outcomes are written, so usage over time is answered from a few thousand rows however
 * many requests there were, and outlives the raw request log. Buckets are UTC hours and days.
 */
import type { Database } from 'bun:sqlite'
import { type SeriesRow, toSeries } from '../history-series.ts'
import type { RateLimitedEvent, UsageSeries, UsageSeriesQuery } from '../types.ts'

const HOUR = 3_600_000
const DAY = 86_400_000

/** The upsert's values after its bucket `t`, in its column order (the statement's text lists them). */
const valuesOf = (f: RollupFact) =>
  [
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
    f.costMicros,
    f.cachedTokens,
    f.cacheWriteTokens,
  ] as const
type Params = [t: number, ...ReturnType<typeof valuesOf>]

const TABLES = ['usage_hourly', 'usage_daily'] as const
type Table = (typeof TABLES)[number]

/** The group's value per row; chosen by a bound parameter, so the statement text is constant. */
const GROUP = `CASE $group WHEN 'account' THEN CAST(account_id AS TEXT) WHEN 'key' THEN key_id
  WHEN 'model' THEN model WHEN 'surface' THEN surface ELSE 'all' END`

/**
 * Every statement, built once from constant table and index names (never from a value). A series
 * reads the key index, the account index, or the time range alone.
 */
const SQL = Object.fromEntries(
  TABLES.map((table) => {
    const series = (index: string, equal: string) =>
      `SELECT t, ${GROUP} AS g, SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens,
         SUM(completion_tokens) AS completion_tokens, SUM(errors) AS errors, SUM(rate_limited) AS rate_limited,
         SUM(latency_ms_sum) AS latency_ms_sum, SUM(cost_micros) AS cost_micros,
         SUM(cached_tokens) AS cached_tokens, SUM(cache_write_tokens) AS cache_write_tokens
       FROM ${table} ${index} WHERE ${equal} AND t >= $from AND t < $to AND ($model IS NULL OR model = $model)
       GROUP BY t, g ORDER BY t`
    return [
      table,
      {
        upsert: `INSERT INTO ${table} (t, account_id, key_id, model, surface, requests, prompt_tokens,
           completion_tokens, errors, rate_limited, latency_ms_sum, cost_micros, cached_tokens, cache_write_tokens)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET requests = requests + excluded.requests, cost_micros = cost_micros + excluded.cost_micros,
           cached_tokens = cached_tokens + excluded.cached_tokens,
           cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
           prompt_tokens = prompt_tokens + excluded.prompt_tokens,
           completion_tokens = completion_tokens + excluded.completion_tokens,
           errors = errors + excluded.errors, rate_limited = rate_limited + excluded.rate_limited,
           latency_ms_sum = latency_ms_sum + excluded.latency_ms_sum`,
        byKey: series(`INDEXED BY ${table}_key`, 'key_id = $key'),
        byAccount: series(`INDEXED BY ${table}_account`, 'account_id = $account'),
        byTime: series('', '1'),
        prune: `DELETE FROM ${table} WHERE (t, account_id, key_id, model, surface) IN
           (SELECT t, account_id, key_id, model, surface FROM ${table} WHERE t < ? LIMIT ?)`,
      },
    ]
  }),
) as Record<Table, { upsert: string; byKey: string; byAccount: string; byTime: string; prune: string }>

/** What a rollup row counts for: a time in its bucket (epoch ms), account, key, model, surface. */
export interface FactKey {
  at: number
  accountId: number
  keyId: string
  model: string
  surface: string
}

export interface RollupFact extends FactKey {
  requests: number
  promptTokens: number
  completionTokens: number
  errors: number
  rateLimited: number
  latencyMs: number
  /** Integer micro-dollars. */
  costMicros: number
  /** Of `promptTokens`: read from the provider's prompt cache, and written to it. */
  cachedTokens: number
  cacheWriteTokens: number
}

/** A fact that counts nothing yet, for `k` (its fields only: `k` may be a larger record). */
export function emptyFact(k: FactKey): RollupFact {
  return {
    at: k.at,
    accountId: k.accountId,
    keyId: k.keyId,
    model: k.model,
    surface: k.surface,
    requests: 0,
    promptTokens: 0,
    completionTokens: 0,
    errors: 0,
    rateLimited: 0,
    latencyMs: 0,
    costMicros: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
  }
}

export class RollupQueries {
  private readonly upserts

  constructor(private readonly db: Database) {
    this.upserts = {
      hourly: db.query<null, Params>(SQL.usage_hourly.upsert),
      daily: db.query<null, Params>(SQL.usage_daily.upsert),
    }
  }

  /** Call inside the caller's write transaction. */
  add(f: RollupFact): void {
    const rest = valuesOf(f)
    this.upserts.hourly.run(f.at - (f.at % HOUR), ...rest)
    this.upserts.daily.run(f.at - (f.at % DAY), ...rest)
  }

  addRateLimited(e: RateLimitedEvent): void {
    this.add({ ...emptyFact(e), rateLimited: 1 })
  }

  series(q: UsageSeriesQuery): UsageSeries[] {
    const step = q.bucket === 'hour' ? HOUR : DAY
    const sql = SQL[q.bucket === 'hour' ? 'usage_hourly' : 'usage_daily']
    const from = q.from - (q.from % step)
    const text = q.keyId !== undefined ? sql.byKey : q.accountId !== undefined ? sql.byAccount : sql.byTime
    const bind: Record<string, string | number | null> = {
      group: q.groupBy,
      from,
      to: q.to,
      model: q.model ?? null,
    }
    if (q.keyId !== undefined) bind.key = q.keyId
    else if (q.accountId !== undefined) bind.account = q.accountId
    const rows = this.db.query<SeriesRow, [typeof bind]>(text).all(bind)
    return toSeries(rows, from, q.to, step)
  }

  /** Deletes up to `chunk` rows older than each cutoff; returns how many went. */
  prune(hourlyBefore: number, dailyBefore: number, chunk: number): number {
    const hourly = this.db.query<null, [number, number]>(SQL.usage_hourly.prune).run(hourlyBefore, chunk)
    const daily = this.db.query<null, [number, number]>(SQL.usage_daily.prune).run(dailyBefore, chunk)
    return hourly.changes + daily.changes
  }
}
