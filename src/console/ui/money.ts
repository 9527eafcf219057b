/** @module Money and token limits as the console shows them (the API sends USD as numbers). */

/**
 * USD with at least 2 decimals and no more than it has (to the micro-dollar), thousands
 * separated: `$0.0025`, `$12.50`, `$7,407.599712`.
 */
export function usd(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—'
  const fixed = Math.abs(v).toFixed(6).replace(/0+$/, '')
  const [whole = '0', frac = ''] = fixed.split('.')
  const sign = v < 0 && Number(fixed) !== 0 ? '-' : ''
  return `${sign}$${whole.replace(/\B(?=(\d{3})+$)/g, ',')}.${frac.padEnd(2, '0')}`
}

/** A model's price line from `/admin/v1/models`: `free`, or `$0.15 in / $0.60 out per 1M`. */
export function priceLine(m: { free?: boolean; pricing?: { input: number; output: number } | null }): string {
  if (m.free || !m.pricing) return 'free'
  return `${usd(m.pricing.input)} in / ${usd(m.pricing.output)} out per 1M`
}
