/**
 * @module
 * Rollup rows (one per bucket and group) → chart-ready series, the same for every backend: one
 * point per bucket (zero where nothing happened), the busiest groups first, the rest summed.
 */
import type { UsagePoint, UsageSeries } from './types.ts'

/** Series beyond this many groups are summed into one called "other". */
export const MAX_GROUPS = 12

export interface SeriesRow extends UsagePoint {
  g: string
}

/** A bucket where nothing happened. */
export const zero = (t: number): UsagePoint => ({
  t,
  requests: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  errors: 0,
  rate_limited: 0,
  latency_ms_sum: 0,
  cost_micros: 0,
  cached_tokens: 0,
  cache_write_tokens: 0,
})

/** Adds `r`'s figures into `p`. */
export const addInto = (p: UsagePoint, r: UsagePoint) => {
  p.requests += r.requests
  p.prompt_tokens += r.prompt_tokens
  p.completion_tokens += r.completion_tokens
  p.errors += r.errors
  p.rate_limited += r.rate_limited
  p.latency_ms_sum += r.latency_ms_sum
  p.cost_micros += r.cost_micros
  p.cached_tokens += r.cached_tokens
  p.cache_write_tokens += r.cache_write_tokens
}

/** One point per bucket (zero where nothing happened), the busiest groups first. */
export function toSeries(rows: SeriesRow[], from: number, to: number, step: number): UsageSeries[] {
  const totals = new Map<string, number>()
  for (const r of rows) totals.set(r.g, (totals.get(r.g) ?? 0) + r.requests + r.rate_limited)
  const ranked = [...totals.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map((e) => e[0])
  const kept = new Set(ranked.slice(0, MAX_GROUPS))
  const groups = [...kept, ...(ranked.length > MAX_GROUPS ? ['other'] : [])]
  const slots = Math.max(0, Math.ceil((to - from) / step))
  const series = new Map(
    groups.map((g) => [g, Array.from({ length: slots }, (_, i) => zero(from + i * step))] as const),
  )
  for (const r of rows) {
    const points = series.get(kept.has(r.g) ? r.g : 'other')!
    const p = points[Math.floor((r.t - from) / step)]
    if (p) addInto(p, r)
  }
  return groups.map((g) => ({ group: g, points: series.get(g)! }))
}
