/**
 * @module
 * Limits as rows (DESIGN §11): a limit is resource × window × scope × capacity, so a backend
 * checks and charges a list of rows in one atomic step instead of knowing `rpm`, `rpd`, `tpm` ...
 * by name. RPM and RPD are two rows; TPM/TPD two more; a budget is a money row over a calendar
 * period. Pure data: no store, no clock of its own.
 *
 * @example
 * limitRows({ rpm: 5, rpd: 100, tpm: 20_000, tpd: null, budget: null }, { tpm: 5_000 })
 * // → requests/minute/account 5, requests/day/account 100, tokens/minute/account 20000,
 * //   tokens/minute/key 5000
 */
import {
  type CalendarPeriod,
  type LimitResource,
  WINDOW_COUNTS,
  type WindowName,
} from '../config/limit-settings.ts'
import { microUnits } from '../util/micro-units.ts'

export type { CalendarPeriod, LimitResource }

/**
 * `minute` / `day`: sliding windows of the last 60 s / 24 h (the spans tests may shorten).
 * `period`: the current calendar period (`LimitRow.period`), reset at its UTC boundary.
 */
export type LimitWindow = 'minute' | 'day' | 'period'

/** `account`: all the account's keys share it. `key`: this key alone, within the account's. */
export type LimitScope = 'account' | 'key'

export interface LimitRow {
  resource: LimitResource
  window: LimitWindow
  /** Set when `window` is `period`. */
  period?: CalendarPeriod
  scope: LimitScope
  /** Integer, at least 1 (tokens, requests or micro-dollars). */
  capacity: number
}

export interface Budget {
  usd: number
  period: CalendarPeriod
}

/** The limits a plan or a key sets that make rows (config/limit-settings.ts); null = none. */
export type LimitSettings = { [N in WindowName]?: number | null } & { budget?: Budget | null }

/** USD → integer micro-dollars (a config's `0.1` is 100000, not 99999; config refused 7+ decimals). */
export const usdToMicros = (usd: number): number => microUnits(usd) ?? Math.round(usd * 1_000_000)

const RESOURCE_ORDER: Record<LimitResource, number> = { requests: 0, tokens: 1, microdollars: 2 }
const WINDOW_ORDER: Record<LimitWindow, number> = { minute: 0, day: 1, period: 2 }

/**
 * The sliding-window rows `s` sets for `scope`, one per setting that makes one (RPM, RPD, TPM, TPD,
 * in the list's order, config/limit-settings.ts); no budget.
 */
export function windowRows(s: LimitSettings, scope: LimitScope): LimitRow[] {
  const rows: LimitRow[] = []
  for (const { name, row } of WINDOW_COUNTS) {
    const capacity = s[name]
    if (capacity !== null && capacity !== undefined)
      rows.push({ resource: row.resource, window: row.window, scope, capacity })
  }
  return rows
}

function rowsOf(s: LimitSettings, scope: LimitScope): LimitRow[] {
  const rows = windowRows(s, scope)
  if (s.budget) {
    rows.push({
      resource: 'microdollars',
      window: 'period',
      period: s.budget.period,
      scope,
      capacity: usdToMicros(s.budget.usd),
    })
  }
  return rows
}

const sameMeasure = (a: LimitRow, b: LimitRow) =>
  a.resource === b.resource && a.window === b.window && a.period === b.period

/**
 * The rows a request is admitted against: the plan's (per account) and the key's own. A key row
 * that cannot bind is left out, so the hot path does no needless work: the key's usage is part of
 * the account's, so a key capacity at or above the account's for the same measure never refuses.
 * Ordered requests → tokens → money, minute → day → period, account → key: the first row that
 * refuses is the one a 429/402 names.
 */
export function limitRows(plan: LimitSettings, key: LimitSettings | null): LimitRow[] {
  const account = rowsOf(plan, 'account')
  const own = key ? rowsOf(key, 'key') : []
  const binding = own.filter((k) => !account.some((a) => sameMeasure(a, k) && a.capacity <= k.capacity))
  return [...account, ...binding].sort(
    (a, b) =>
      RESOURCE_ORDER[a.resource] - RESOURCE_ORDER[b.resource] ||
      WINDOW_ORDER[a.window] - WINDOW_ORDER[b.window] ||
      (a.scope === b.scope ? 0 : a.scope === 'account' ? -1 : 1),
  )
}

/** A stable name for a row, for storage keys and messages: `account:tokens:minute`, `key:microdollars:month`. */
export const rowKey = (r: LimitRow): string =>
  `${r.scope}:${r.resource}:${r.window === 'period' ? r.period : r.window}`

export interface PeriodBounds {
  /** The period's first millisecond (UTC). */
  start: number
  /** The next period's first millisecond: when the budget resets. */
  resetsAt: number
}

/**
 * The calendar period holding `now`, in UTC. Weeks start on Monday (ISO 8601).
 * @example periodBounds('month', Date.parse('2026-02-14T10:00:00Z'))
 * // → { start: Date.parse('2026-02-01T00:00:00Z'), resetsAt: Date.parse('2026-03-01T00:00:00Z') }
 */
export function periodBounds(period: CalendarPeriod, now: number): PeriodBounds {
  const d = new Date(now)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth()
  const day = d.getUTCDate()
  if (period === 'month') return { start: Date.UTC(y, m, 1), resetsAt: Date.UTC(y, m + 1, 1) }
  if (period === 'day') return { start: Date.UTC(y, m, day), resetsAt: Date.UTC(y, m, day + 1) }
  const sinceMonday = (d.getUTCDay() + 6) % 7
  return { start: Date.UTC(y, m, day - sinceMonday), resetsAt: Date.UTC(y, m, day - sinceMonday + 7) }
}

/** What a backend reports for one row after checking it: the figures headers and /v1/usage show. */
export interface RowState {
  row: LimitRow
  /** Everything charged to the row: settled use plus what reservations in flight hold. */
  used: number
  /**
   * The part of `used` still held by reservations of requests in flight (not settled yet): what
   * the row frees or keeps when they end. Reported by `Limiter.rowStates` (the read path: refusal
   * wording, `/v1/usage`); absent (read as 0) on the states an admission returns.
   */
  reserved?: number
  /** capacity − used: what is truly left now, holds included. */
  remaining: number
  /**
   * When capacity next frees: for a sliding window, when its oldest charge leaves it (null when
   * empty); for a period, when the period ends.
   */
  resetAt: number | null
}

/**
 * The row state from a window's charges: `used` so far (holds included), the oldest charge at
 * `first`; `reserved`: the part of `used` held by reservations in flight, when the caller read it.
 */
export function rowState(
  row: LimitRow,
  used: number,
  first: number | null,
  spanOrResetAt: number,
  reserved?: number,
): RowState {
  const resetAt = row.window === 'period' ? spanOrResetAt : first === null ? null : first + spanOrResetAt
  const s: RowState = { row, used, remaining: Math.max(0, row.capacity - used), resetAt }
  if (reserved !== undefined) s.reserved = Math.min(Math.max(0, reserved), used)
  return s
}

/** What `s` has settled: its use without the holds of requests in flight. */
export const settledOf = (s: RowState): number => s.used - (s.reserved ?? 0)

/**
 * Whether `s` binds rather than `best` (the one bound so far, if any): less left wins, and the
 * first seen (the account's, listed before the key's) on a tie.
 */
export const binds = (s: RowState, best: RowState | undefined): boolean =>
  !best || s.remaining < best.remaining

/**
 * The row that applies for a measure: of the account's and the key's, the one with less left
 * (the account's on a tie). Undefined when neither sets it.
 */
export function bindingState(
  states: RowState[],
  resource: LimitResource,
  window: LimitWindow,
): RowState | undefined {
  let best: RowState | undefined
  for (const s of states) {
    if (s.row.resource !== resource || s.row.window !== window) continue
    if (binds(s, best)) best = s
  }
  return best
}
