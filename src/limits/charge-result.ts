/**
 * @module
 * A charge decision as the engines outside the process (PostgreSQL's `switchyard_charge`, Redis)
 * return it, as JSON, → the limiter's Reservation or ChargeRefusal. The engine reports each row's
 * use before the charge; the states after it (for headers) are derived here, as SQLite does.
 */
import { type RowState, rowState } from './rows.ts'
import type { ChargeRefusal, ChargeRequest, Extended, Extension, Reservation, WindowSpans } from './types.ts'

interface RowFigures {
  used: number | string
  remaining: number | string
  reset: number | string | null
}

/** What the engine answers: `ok` with the charge, or the refusing row's index and figures. */
export type ChargeDecision =
  | {
      ok: true
      tokens: number | string
      micros: number | string
      out: number | string
      clamp: string | null
      states: RowFigures[]
    }
  | ({ ok: false; i: number; needs: number | string; retry: number | string | null } & RowFigures)

const n = (v: number | string) => Number(v)
const nOrNull = (v: number | string | null | undefined) => (v === null || v === undefined ? null : Number(v))

export function chargeOutcome(
  charge: ChargeRequest,
  raw: ChargeDecision | string,
  at: number,
  spans: WindowSpans,
  handle: string,
): { reservation: Reservation } | { refusal: ChargeRefusal } {
  const d = (typeof raw === 'string' ? JSON.parse(raw) : raw) as ChargeDecision
  const span = (w: string) => (w === 'minute' ? spans.minuteMs : spans.dayMs)
  if (!d.ok) {
    const row = charge.rows[d.i]!
    const state: RowState = { row, used: n(d.used), remaining: n(d.remaining), resetAt: nOrNull(d.reset) }
    return { refusal: { state, needs: n(d.needs), retryAt: nOrNull(d.retry) } }
  }
  const tokens = n(d.tokens)
  const micros = n(d.micros)
  const states = charge.rows.map((row, i) => {
    const f = d.states[i]!
    const amount = row.resource === 'requests' ? 1 : row.resource === 'tokens' ? tokens : micros
    const before = rowState(row, n(f.used), null, 0)
    const resetAt = nOrNull(f.reset) ?? (row.window === 'period' ? null : at + span(row.window))
    return { ...before, used: before.used + amount, remaining: Math.max(0, n(f.remaining) - amount), resetAt }
  })
  return {
    reservation: { tokens, micros, outputTokens: n(d.out), clampedBy: d.clamp, states, handle },
  }
}

/** What an engine answers to an extension: whether it grew, and each row's figures before it. */
export interface ExtendDecision {
  ok: boolean
  states: RowFigures[]
}

/** An extension's answer (PostgreSQL's `switchyard_extend`, Redis's script) → what it granted and the rows after it. */
export function extendOutcome(
  q: Extension,
  raw: ExtendDecision | string,
  at: number,
  spans: WindowSpans,
): Extended {
  const d = (typeof raw === 'string' ? JSON.parse(raw) : raw) as ExtendDecision
  const tokens = d.ok ? q.tokens : 0
  const micros = d.ok ? q.micros : 0
  // An empty list from Redis's cjson is an object (`{}`).
  const states = (Array.isArray(d.states) ? d.states : []).map((f, i): RowState => {
    const row = q.rows[i]!
    const amount = row.resource === 'tokens' ? tokens : row.resource === 'microdollars' ? micros : 0
    const reset =
      nOrNull(f.reset) ??
      (amount && row.window !== 'period'
        ? at + (row.window === 'minute' ? spans.minuteMs : spans.dayMs)
        : null)
    return { row, used: n(f.used) + amount, remaining: Math.max(0, n(f.remaining) - amount), resetAt: reset }
  })
  return { tokens, micros, states }
}
