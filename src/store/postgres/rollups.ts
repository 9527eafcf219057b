/**
 * @module
 * The hourly and daily usage rollups on PostgreSQL, one row per (bucket, account, key, model,
 * surface), as SQLite's rollups.ts keeps them: both are added to by the same upsert, in the
 * statement that writes what they count (outcomes, rate-limit refusals). Buckets are UTC hours
 * and days, in epoch ms.
 */
import type { SQL } from 'bun'

/**
 * The upsert that adds a CTE named `f` to the hourly or daily rollup. `f`'s columns: `at` (epoch
 * ms), account_id, key_id, model, surface, and what each fact adds: n requests, p prompt tokens,
 * c completion tokens, e errors, r rate-limit refusals, l latency ms, m cost micro-dollars,
 * k cached tokens, w cache-write tokens. Statement text only (no bound value): each bucket's
 * text is a constant.
 */
export function rollupOf(sql: SQL, bucket: 'hour' | 'day') {
  const [table, ms] =
    bucket === 'hour' ? [sql`usage_hourly`, sql`3600000`] : [sql`usage_daily`, sql`86400000`]
  return sql`INSERT INTO ${table} AS x (t, account_id, key_id, model, surface, requests, prompt_tokens,
        completion_tokens, errors, rate_limited, latency_ms_sum, cost_micros, cached_tokens, cache_write_tokens)
      SELECT at - at % ${ms}, account_id, key_id, model, surface, SUM(n), SUM(p), SUM(c),
        SUM(e), SUM(r), SUM(l), SUM(m), SUM(k), SUM(w) FROM f GROUP BY 1, 2, 3, 4, 5
      ON CONFLICT (t, account_id, key_id, model, surface) DO UPDATE SET requests = x.requests + excluded.requests,
        cost_micros = x.cost_micros + excluded.cost_micros,
        cached_tokens = x.cached_tokens + excluded.cached_tokens,
        cache_write_tokens = x.cache_write_tokens + excluded.cache_write_tokens,
        prompt_tokens = x.prompt_tokens + excluded.prompt_tokens,
        completion_tokens = x.completion_tokens + excluded.completion_tokens,
        errors = x.errors + excluded.errors, rate_limited = x.rate_limited + excluded.rate_limited,
        latency_ms_sum = x.latency_ms_sum + excluded.latency_ms_sum`
}
