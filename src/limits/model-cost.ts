/**
 * @module
 * What a finished request cost at its model's `pricing` (integer micro-dollars; null when nothing
 * was billed). The model's prices are turned into integers once per model, not per request.
 */
import type { ModelConfig } from '../config/index.ts'
import {
  countsOfUsage,
  type DearestPrices,
  dearestPrices,
  type PricingUnits,
  pricingUnits,
  requestCostMicros,
} from './pricing.ts'
import { NO_SURCHARGE, perCallMicros, type Surcharge, tierUnits } from './surcharge.ts'

const UNITS = new WeakMap<ModelConfig, PricingUnits | null>()

/** The model's prices as integers (null: free), converted once per model. */
export function unitsOf(model: ModelConfig): PricingUnits | null {
  let u = UNITS.get(model)
  if (u === undefined) {
    u = model.pricing ? pricingUnits(model.pricing) : null
    UNITS.set(model, u)
  }
  return u
}

const DEAREST = new WeakMap<ModelConfig, DearestPrices | null>()

/** The model's dearest input and output prices (cache writes and reasoning included; null: free), once per model. */
export function dearestOf(model: ModelConfig): DearestPrices | null {
  let p = DEAREST.get(model)
  if (p === undefined) {
    const u = unitsOf(model)
    p = u && dearestPrices(u)
    DEAREST.set(model, p)
  }
  return p
}

/**
 * 0 for a free model that billed tokens; null when the upstream reported no usage. With the
 * request's surcharges: its tier's prices where the model sets them, plus the per-call tools
 * reserved (the calls made are not counted from the answer: each reserved call is charged).
 */
export function modelCostMicros(
  model: ModelConfig,
  usage: Parameters<typeof countsOfUsage>[0] | null,
  surcharge: Surcharge = NO_SURCHARGE,
): number | null {
  if (!usage) return null
  return (
    requestCostMicros(tierUnits(model, surcharge, unitsOf(model)), countsOfUsage(usage)) +
    perCallMicros(model, surcharge)
  )
}
