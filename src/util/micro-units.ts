/**
 * @module
 * A decimal config value (USD, or USD per 1M tokens) as an integer count of millionths, exactly:
 * money is never kept as a float. Values with more than 6 decimals have no exact count and are
 * refused (null), so `0.075` is 75000 and `0.0000001` is an error, not a silent 0.
 *
 * @example microUnits(0.075) // → 75000
 */
export function microUnits(value: number): number | null {
  if (!Number.isFinite(value)) return null
  const scaled = Math.round(value * 1_000_000)
  // 0.075 * 1e6 is 74999.99999999999: what is within float noise of an integer is that integer.
  if (Math.abs(scaled - value * 1_000_000) > 1e-9 * Math.max(1, Math.abs(scaled))) return null
  return Number.isSafeInteger(scaled) ? scaled : null
}
