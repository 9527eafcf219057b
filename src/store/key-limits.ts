/**
 * @module
 * A key's own limits as both SQL backends store them: one nullable column each (a count's column
 * is its setting's name, config/limit-settings.ts), the budget as micro-dollars and period, the
 * model list as a JSON array in text. Shared so SQLite and PostgreSQL read and write the same shape.
 */
import { type KeyCountName, keyCounts } from '../config/limit-settings.ts'
import type { CalendarPeriod } from '../limits/rows.ts'
import type { KeyLimits } from './types.ts'

/** The api_keys columns, as a row carries them (BIGINT columns may arrive as strings). */
export type KeyLimitColumns = { [N in KeyCountName]: unknown } & {
  budget_micros: unknown
  budget_period: unknown
  models: unknown
}

const n = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))

/** null when the key sets nothing of its own. */
export function keyLimitsOf(r: KeyLimitColumns): KeyLimits | null {
  const limits = {
    ...keyCounts((name) => n(r[name])),
    budgetMicros: n(r.budget_micros),
    budgetPeriod: (r.budget_period as CalendarPeriod | null) ?? null,
    models: typeof r.models === 'string' ? (JSON.parse(r.models) as string[]) : null,
  } as KeyLimits
  return Object.values(limits).every((v) => v === null) ? null : limits
}

/** The column values to bind, in the order rpm, rpd, tpm, tpd, budget_micros, budget_period, models. */
export function keyLimitValues(
  l: KeyLimits | null | undefined,
): [number | null, number | null, number | null, number | null, number | null, string | null, string | null] {
  if (!l) return [null, null, null, null, null, null, null]
  return [
    l.rpm,
    l.rpd,
    l.tpm,
    l.tpd,
    l.budgetMicros,
    l.budgetPeriod,
    l.models ? JSON.stringify(l.models) : null,
  ]
}
