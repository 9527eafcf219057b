/**
 * @module
 * A key's own limits in the console's forms, without the page (key-limits.tsx): the count fields
 * of config/limit-settings.ts with their labels, a one-line summary, and a form's fields as the
 * admin API takes them.
 */
import { formLabel, KEY_COUNTS, type KeyCountName } from '../../../config/limit-settings.ts'
import { usd } from '../money.ts'

/** A key's counts (config/limit-settings.ts) with their labels: `['rpm', 'Requests/min']` ... */
export const COUNTS = KEY_COUNTS.map((s) => [s.name, formLabel(s)] as const)

export type LimitsView = { [N in KeyCountName]: number | null } & {
  budget: { usd: number; period: string } | null
  models: string[] | null
}

/** One line for the table: `tpm 5,000 · $2.00/day · 1 model`, or nothing. */
export function limitsSummary(l: LimitsView | undefined): string {
  if (!l) return ''
  const parts: string[] = []
  for (const [f] of COUNTS) if (l[f] !== null) parts.push(`${f} ${l[f]!.toLocaleString('en-US')}`)
  if (l.budget) parts.push(`${usd(l.budget.usd)}/${l.budget.period}`)
  if (l.models) parts.push(l.models.join(', '))
  return parts.join(' · ')
}

/**
 * The limits a form's fields set, as the admin API takes them. `clear`: an empty field is sent as
 * null (editing: clears it); otherwise it is left out (creating: nothing to clear).
 */
export function limitsFromForm(f: FormData, clear: boolean): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {}
  const text = (k: string) => String(f.get(k) ?? '').trim()
  for (const [k] of COUNTS) {
    const v = text(`limit_${k}`)
    if (v) out[k] = Number(v)
    else if (clear) out[k] = null
  }
  const amount = text('limit_budget_usd')
  if (amount) out.budget = { usd: Number(amount), period: text('limit_budget_period') }
  else if (clear) out.budget = null
  const models = text('limit_models')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (models.length) out.models = models
  else if (clear) out.models = null
  return Object.keys(out).length ? out : undefined
}
