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
  let micros = 0
  const t = {
    requests: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    cache_write_tokens: 0,
    errors: 0,
  }
  for (const p of points) {
    t.requests += p.requests
    t.prompt_tokens += p.prompt_tokens
    t.completion_tokens += p.completion_tokens
    t.cached_tokens += p.cached_tokens
    t.cache_write_tokens += p.cache_write_tokens
    t.errors += p.errors
    micros += p.cost_micros
  }
  return { ...t, total_tokens: t.prompt_tokens + t.completion_tokens, cost_usd: microsToUsd(micros) }
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
