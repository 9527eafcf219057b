/**
 * @module
 * One account's Redis state computed from its database rows (rebuild-script.ts writes it): the
 * request log, the sliding token and request windows of the account and of each of its keys,
 * the money spent in each calendar period, and the reservations still in flight.
 *
 * Settled rows are summed per bucket (a second of the minute's window, a minute of the day's),
 * each bucket leaving its window with its latest row: after a rebuild a charge may count up to
 * one bucket longer than it would have, never shorter. Reservations in flight stay one member
 * each, so their settlement moves them as before.
 *
 * @example
 * const state = rebuildState(history, { prefix: 'sy:{acct:7}:', now, keep: 60_000, spans, periods })
 */
import { periodBounds } from '../../limits/rows.ts'
import type { WindowSpans } from '../../limits/types.ts'
import type { AdmissionLog, ChargeHistory } from '../types.ts'

/** The account's key prefix (its hash tag), under which the charge keys live. */
export const prefixOf = (accountId: number) => `sy:{acct:${accountId}}:`

/** The calendar periods holding `now` as [start, end] (the scripts charge money per period). */
export function periodsAt(now: number): Record<Period, [number, number]> {
  const of = (p: Period): [number, number] => {
    const b = periodBounds(p, now)
    return [b.start, b.resetsAt]
  }
  return { day: of('day'), week: of('week'), month: of('month') }
}

/** The calendar periods just before those holding `now`, as [start, end] (a hold's growth may be charged to one). */
export function periodsBefore(now: number): Record<Period, [number, number]> {
  const at = periodsAt(now)
  const of = (p: Period) => periodsAt(at[p][0] - 1)[p]
  return { day: of('day'), week: of('week'), month: of('month') }
}

/**
 * The account's state as the database's rows give it: `keep` the longest request window to log
 * (0: none), `logLimit` its most entries. What a rebuild writes, and what `rowStates` reads
 * without writing it.
 */
export async function databaseState(
  log: Pick<AdmissionLog, 'chargeHistory'>,
  spans: WindowSpans,
  accountId: number,
  now: number,
  keep = 0,
  logLimit = 0,
) {
  const { minuteMs, dayMs } = spans
  const periods = periodsAt(now)
  const history = await log.chargeHistory({
    accountId,
    now,
    logSince: now - keep,
    logLimit,
    minuteMs,
    dayMs,
    minuteBucketMs: Math.max(1, Math.floor(minuteMs / 60)),
    dayBucketMs: Math.max(1, Math.floor(dayMs / 1440)),
    periods: { day: periods.day[0], week: periods.week[0], month: periods.month[0] },
  })
  const state = rebuildState(history, { prefix: prefixOf(accountId), now, keep, spans, periods })
  return { history, state }
}

export interface RebuildState {
  log: number[]
  keep: number
  windows: Array<{ base: string; ttl: number; m: Array<[string, number, number]> }>
  /** [key, micro-dollars, expires at] */
  spend: Array<[string, number, number]>
  res: Array<{ h: string; t: number; m: number; w: string[]; s: string[]; at: number }>
  resTtl: number
}

type Period = 'day' | 'week' | 'month'

export function rebuildState(
  h: ChargeHistory,
  o: {
    prefix: string
    now: number
    keep: number
    spans: WindowSpans
    /** Calendar periods holding `now`: [start, end]. */
    periods: Record<Period, [number, number]>
  },
): RebuildState {
  const { prefix: pre, now } = o
  const span = { minute: o.spans.minuteMs, day: o.spans.dayMs }
  const windows = new Map<string, RebuildState['windows'][number]>()
  const add = (
    sc: string,
    resource: 'tokens' | 'requests',
    w: 'minute' | 'day',
    m: [string, number, number],
  ) => {
    if (m[2] <= 0) return
    const base = `${pre}c:${sc}:${resource}:${w}`
    const win = windows.get(base) ?? { base, ttl: span[w] * 2, m: [] }
    windows.set(base, win)
    win.m.push(m)
  }
  for (const b of h.buckets) {
    const k = `k:${b.keyId}`
    add('a', 'tokens', b.window, [`b:${b.keyId}:${b.at}`, b.at, b.tokens])
    add(k, 'tokens', b.window, [`b:${b.at}`, b.at, b.tokens])
    add(k, 'requests', b.window, [`b:${b.at}`, b.at, b.requests])
  }
  const spendKey = (sc: string, p: Period) => `${pre}sp:${sc}:${p}:${o.periods[p][0]}`
  const spent = new Map<string, [string, number, number]>()
  const addSpend = (sc: string, p: Period, micros: number) => {
    const key = spendKey(sc, p)
    const s = spent.get(key) ?? [key, 0, o.periods[p][1] + span.day]
    s[1] += micros
    spent.set(key, s)
  }
  for (const s of h.spend) {
    addSpend('a', s.period, s.micros)
    addSpend(`k:${s.keyId}`, s.period, s.micros)
  }
  const res: RebuildState['res'] = []
  for (const r of h.open) {
    const w: string[] = []
    for (const win of ['minute', 'day'] as const) {
      if (r.at <= now - span[win]) continue
      for (const sc of ['a', `k:${r.keyId}`]) {
        add(sc, 'tokens', win, [r.handle, r.at, r.tokens])
        w.push(`${pre}c:${sc}:tokens:${win}`)
      }
    }
    const s = (['day', 'week', 'month'] as const)
      .filter((p) => r.at >= o.periods[p][0])
      .flatMap((p) => [spendKey('a', p), spendKey(`k:${r.keyId}`, p)])
    res.push({ h: r.handle, t: r.tokens, m: r.micros, w, s, at: r.at })
  }
  return {
    log: h.log,
    keep: o.keep,
    windows: [...windows.values()],
    spend: [...spent.values()].filter((s) => s[1] > 0),
    res,
    resTtl: span.day * 2,
  }
}
