/**
 * @module
 * Calendar periods as the SQL backends store them: a money counter's code in a charge's `budgets`
 * column (SQLite: the account's in bits 0–1, a key's in 2–3; PostgreSQL: per row), and the
 * periods' bounds at one time, worked out once.
 */
import type { CalendarPeriod, PeriodBounds } from '../limits/rows.ts'
import { periodBounds } from '../limits/rows.ts'

export const PERIOD_CODE: Record<CalendarPeriod, number> = { day: 1, week: 2, month: 3 }
/** PERIOD_CODE's inverse (0: no money counter). */
export const PERIODS: (CalendarPeriod | null)[] = [null, 'day', 'week', 'month']

/** Calendar periods' bounds at one time, each worked out once (a Date apiece). */
export class Periods {
  private readonly cache: Record<CalendarPeriod, PeriodBounds | null> = { day: null, week: null, month: null }
  constructor(private t: number) {}
  /** The same cache moved to `t`: bounds that still hold `t` are kept. */
  at(t: number): this {
    this.t = t
    return this
  }
  of(period: CalendarPeriod): PeriodBounds {
    const b = this.cache[period]
    if (b && this.t >= b.start && this.t < b.resetsAt) return b
    const now = periodBounds(period, this.t)
    this.cache[period] = now
    return now
  }
}
