/**
 * @module
 * One key's usage as the admin key view shows it (`GET /admin/v1/keys/{id}`): requests, tokens —
 * with the prompt cache's share of `prompt_tokens`, read (`cached_tokens`) and written
 * (`cache_write_tokens`) — and settled cost, today and this month (UTC), as `/v1/usage` shows an
 * account's (DESIGN §14 "cached and cache-write tokens are priced and shown"). Read from the daily
 * rollups by the key's index: one bounded read (at most 31 buckets). Tokens and cost count to the
 * model that answered, requests to the one asked for, as everywhere in the ledger.
 */
import { microsToUsd } from '../limits/pricing.ts'
import { periodBounds } from '../limits/rows.ts'
import { addInto, zero } from '../store/history-series.ts'
import type { Store, UsagePoint } from '../store/index.ts'
import { DAY_MS, iso } from '../util/clock.ts'

export interface KeyUsageTotals {
  requests: number
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  /** Of prompt_tokens: read from the provider's prompt cache (priced at `cached_input`). */
  cached_tokens: number
  /** Of prompt_tokens: written to the provider's prompt cache (priced at `cache_write`). */
  cache_write_tokens: number
  errors: number
  /** Settled: money still held by requests in flight is not in it. */
  cost_usd: number
}

function totals(points: readonly UsagePoint[]): KeyUsageTotals {
  const t = zero(0)
  for (const p of points) addInto(t, p)
  return {
    requests: t.requests,
    prompt_tokens: t.prompt_tokens,
    completion_tokens: t.completion_tokens,
    total_tokens: t.prompt_tokens + t.completion_tokens,
    cached_tokens: t.cached_tokens,
    cache_write_tokens: t.cache_write_tokens,
    errors: t.errors,
    cost_usd: microsToUsd(t.cost_micros),
  }
}

export async function keyUsage(store: Pick<Store, 'usageSeries'>, keyId: string, now: number) {
  const today = now - (now % DAY_MS)
  const month = periodBounds('month', now).start
  const [series] = await store.usageSeries({
    bucket: 'day',
    from: month,
    to: today + DAY_MS,
    keyId,
    groupBy: 'none',
  })
  const points = series?.points ?? []
  return {
    today: totals(points.filter((p) => p.t >= today)),
    this_month: totals(points),
    day_starts_at: iso(today),
    month_starts_at: iso(month),
  }
}
