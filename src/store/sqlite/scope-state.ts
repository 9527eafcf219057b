/**
 * @module
 * A scope's limit state on SQLite as stored and as an admission works on it (scopes.ts reads and
 * writes it): per span the running sums and the oldest charge after its start, and a money
 * counter per calendar period kind.
 */
import type { CalendarPeriod } from '../../limits/rows.ts'
import { PERIODS, type Periods } from '../periods.ts'

/** A scope's state as stored (an account's newest admission row, a key's `limit_scopes` row); null: not kept. */
export interface Stored {
  m_start: number | null
  m_first: number | null
  d_start: number | null
  d_first: number | null
  rm: number | null
  rd: number | null
  tm: number | null
  td: number | null
  pd_start: number | null
  pd: number | null
  pw_start: number | null
  pw: number | null
  pm_start: number | null
  pm: number | null
}

/**
 * A scope's state while an admission works on it: a copy of the stored one, its spans moved to the
 * windows' edges and the reservation charged in place; then stored as it is. A span no row reads
 * is stored as an empty window ending at the admission (null sums). `minute` / `day`: the span is
 * kept (some row reads it).
 */
// Its columns are `Stored`'s (declared once, there); the constructor assigns every one.
export interface State extends Stored {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every column.
export class State {
  minute = false
  day = false
  constructor(s: Stored) {
    this.m_start = s.m_start
    this.m_first = s.m_first
    this.d_start = s.d_start
    this.d_first = s.d_first
    this.rm = s.rm
    this.rd = s.rd
    this.tm = s.tm
    this.td = s.td
    this.pd_start = s.pd_start
    this.pd = s.pd
    this.pw_start = s.pw_start
    this.pw = s.pw
    this.pm_start = s.pm_start
    this.pm = s.pm
  }
}

/** A state's money counters. */
type PeriodCounters = Pick<Stored, 'pd_start' | 'pd' | 'pw_start' | 'pw' | 'pm_start' | 'pm'>

/** The stored state's columns, in their stored order (the admission insert's and `limit_scopes`'). */
export type StateValues = Array<number | null>

/** No state kept (an account that never charged): every column null. */
export const EMPTY_STATE: Stored = {
  m_start: null,
  m_first: null,
  d_start: null,
  d_first: null,
  rm: null,
  rd: null,
  tm: null,
  td: null,
  pd_start: null,
  pd: null,
  pw_start: null,
  pw: null,
  pm_start: null,
  pm: null,
}

/** A stored state as the columns that store it (an admission carrying its account's state forward). */
export const stateValues = (s: Stored): StateValues => [
  s.m_start,
  s.m_first,
  s.d_start,
  s.d_first,
  s.rm,
  s.rd,
  s.tm,
  s.td,
  s.pd_start,
  s.pd,
  s.pw_start,
  s.pw,
  s.pm_start,
  s.pm,
]

/** A settlement's change to a scope: the charge's time, tokens and micro-dollars, the period charged. */
export interface Change {
  at: number
  dt: number
  dm: number
  /** The period kind the money went to (null: none), and that period's start. */
  period: CalendarPeriod | null
  start: number
}

/** The start of the period a state's counter of `period` counts (null: it counts none yet). */
export const counterStart = (s: PeriodCounters, period: CalendarPeriod): number | null =>
  period === 'day' ? s.pd_start : period === 'week' ? s.pw_start : s.pm_start

/** What a state's counter of `period` holds for the period starting at `start` (0 when it counts another). */
export const spentOf = (s: PeriodCounters, period: CalendarPeriod, start: number): number =>
  counterStart(s, period) !== start ? 0 : ((period === 'day' ? s.pd : period === 'week' ? s.pw : s.pm) ?? 0)

/** Sets a state's counter of `period` to `micros` spent in the period starting at `start`. */
export function setSpent(s: State, period: CalendarPeriod, start: number, micros: number): void {
  if (period === 'day') {
    s.pd_start = start
    s.pd = micros
  } else if (period === 'week') {
    s.pw_start = start
    s.pw = micros
  } else {
    s.pm_start = start
    s.pm = micros
  }
}

/** What settling a charge needs to know of it: where it went (its account, key and periods) and when. */
interface Charged {
  account: number
  at: number
  keyId: string
  /** The money counters it charged: the account's code in bits 0–1, the key's in 2–3 (PERIOD_CODE). */
  budgets: number
  /** The key has rows of its own (a `limit_scopes` row to settle). */
  keyRows: boolean
}

/** Settled charges' differences from their reservations, by the scope they go to. */
export class Changes {
  readonly accounts = new Map<number, Change[]>()
  readonly keys = new Map<string, Change[]>()
  constructor(private readonly periods: Periods) {}

  /** A settled charge: `dt` tokens and `dm` micro-dollars off (or onto) what it reserved. */
  add(h: Charged, dt: number, dm: number): void {
    if (dt === 0 && dm === 0) return
    push(this.accounts, h.account, this.change(h, h.budgets & 3, dt, dm))
    if (h.keyRows) push(this.keys, h.keyId, this.change(h, h.budgets >> 2, dt, dm))
  }

  private change(h: Charged, code: number, dt: number, dm: number): Change {
    const period = PERIODS[code] ?? null
    return { at: h.at, dt, dm, period, start: period ? this.periods.at(h.at).of(period).start : 0 }
  }
}

function push<K>(m: Map<K, Change[]>, k: K, c: Change): void {
  const list = m.get(k)
  if (list) list.push(c)
  else m.set(k, [c])
}
