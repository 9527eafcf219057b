/**
 * @module
 * A model's prices as clients see them (`/v1/models`, `switchyard models`, the console): USD per
 * 1M tokens, with the defaults the gateway bills by spelled out (cached input and cache writes at
 * the input price, reasoning at the output price, unless configured), so a client never has to
 * know those rules. A model without `pricing` is free and says so: `free: true`, `pricing: null`.
 * The surcharges it prices are shown where configured: `service_tier` (each tier's prices per 1M
 * tokens, cached input spelled out) and `per_call` (USD per call of a hosted tool).
 *
 * @example
 * priceView({ input: 0.15, output: 0.6 })
 * // → { free: false, pricing: { currency: 'USD', per_tokens: 1000000, input: 0.15, output: 0.6,
 * //      cached_input: 0.15, cache_write: 0.15, reasoning: 0.6 } }
 */
import type { PricingConfig } from '../config/schema.ts'
import { formatUsd } from '../limits/pricing.ts'
import { usdToMicros } from '../limits/rows.ts'

export interface PriceView {
  /** True when requests to the model cost nothing (no `pricing`, or every price 0). */
  free: boolean
  pricing: {
    currency: 'USD'
    /** The prices are per this many tokens. */
    per_tokens: 1_000_000
    input: number
    output: number
    cached_input: number
    cache_write: number
    reasoning: number
    service_tier?: Record<string, { input: number; output: number; cached_input: number }>
    per_call?: Record<string, number>
  } | null
}

export function priceView(p: PricingConfig | undefined): PriceView {
  if (!p) return { free: true, pricing: null }
  const pricing = {
    currency: 'USD' as const,
    per_tokens: 1_000_000 as const,
    input: p.input,
    output: p.output,
    cached_input: p.cached_input ?? p.input,
    cache_write: p.cache_write ?? p.input,
    reasoning: p.reasoning ?? p.output,
    ...(p.service_tier && {
      service_tier: Object.fromEntries(
        Object.entries(p.service_tier).map(([tier, t]) => [
          tier,
          { input: t.input, output: t.output, cached_input: t.cached_input ?? t.input },
        ]),
      ),
    }),
    ...(p.per_call && { per_call: { ...p.per_call } }),
  }
  const prices = [pricing.input, pricing.output, pricing.cached_input, pricing.cache_write, pricing.reasoning]
  return { free: prices.every((v) => v === 0), pricing }
}

/** One line for tables: `free`, or `$0.15 in / $0.60 out / $0.075 cached per 1M` (cached when it differs). */
export function priceText(v: PriceView): string {
  if (v.free || !v.pricing) return 'free'
  const p = v.pricing
  const $ = (usd: number) => formatUsd(usdToMicros(usd))
  const cached = p.cached_input === p.input ? '' : ` / ${$(p.cached_input)} cached`
  return `${$(p.input)} in / ${$(p.output)} out${cached} per 1M`
}
