/**
 * @module
 * The c=1 lane's timeline: what a traced gateway's event loop did (loop-trace.ts) while each
 * request was in flight, cut by the client's wall-clock stamps. For each traced target the requests
 * over its p99 are the tail; for every kind of work (a SQL statement, a timer's function, the
 * upstream fetch, a collection) it reports how many tail requests and how many of the rest saw it,
 * and the ms it took inside them — what sets the tail apart is what the tail sees and the rest
 * does not. Plus the periodic work over the whole run: each timer and statement's count, total and
 * longest run.
 */

import type { TraceEvent } from './loop-trace.ts'
import { quantile, sortedCopy } from './workload.ts'

export interface WorkLine {
  label: string
  /** Share of the tail requests during which it ran (0..1), and of the rest. */
  tailShare: number
  restShare: number
  /** Mean ms of it per tail request, and per other request. */
  tailMs: number
  restMs: number
}

export interface TargetTimeline {
  target: string
  requests: number
  p50Us: number
  p99Us: number
  tail: number
  /** Mean ms of the tail requests' windows covered by traced work (the rest is uncovered time). */
  tailCoveredMs: number
  tailMeanMs: number
  lines: WorkLine[]
}

export interface PeriodicLine {
  label: string
  count: number
  totalMs: number
  maxMs: number
  /** Runs over 1 ms. */
  over1ms: number
}

export interface Timeline {
  targets: TargetTimeline[]
  periodic: PeriodicLine[]
  events: number
}

const key = (e: TraceEvent) => `${e[0]}: ${e[3]}`

/** `stamps` per target: [start, end] epoch ms of each request, in the order sent; `totals` µs alike. */
export function analyse(
  events: TraceEvent[],
  stamps: Record<string, [number, number][]>,
  totals: Record<string, number[]>,
): Timeline {
  const sorted = [...events].sort((a, b) => a[1] - b[1])
  const starts = Float64Array.from(sorted, (e) => e[1])
  // Events are short; any that overlaps [a, b] starts after a − the longest event.
  const longest = sorted.reduce((m, e) => Math.max(m, e[2]), 0)
  const lowerBound = (t: number) => {
    let lo = 0
    let hi = starts.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (starts[mid]! < t) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  /**
   * ms of each kind of work inside [a, b], and the ms covered by work on the loop (the union of
   * the spans, fetches left out: a fetch waits, it does not run; a transaction holds statements).
   */
  const inside = (a: number, b: number): { work: Map<string, number>; covered: number } => {
    const work = new Map<string, number>()
    let covered = 0
    let reach = a
    for (let i = lowerBound(a - longest); i < sorted.length && starts[i]! <= b; i++) {
      const e = sorted[i]!
      const from = Math.max(a, e[1])
      const to = Math.min(b, e[1] + e[2])
      if (to < from) continue
      work.set(key(e), (work.get(key(e)) ?? 0) + (to - from))
      if (e[0] === 'fetch' || to <= reach) continue
      covered += to - Math.max(from, reach)
      reach = to
    }
    return { work, covered }
  }
  const targets: TargetTimeline[] = []
  for (const [target, st] of Object.entries(stamps)) {
    const tot = totals[target] ?? []
    const s = sortedCopy(tot)
    const p99 = quantile(s, 0.99)
    const tailAcc = new Map<string, [number, number]>()
    const restAcc = new Map<string, [number, number]>()
    let tail = 0
    let covered = 0
    let tailMs = 0
    for (let i = 0; i < st.length; i++) {
      const [a, b] = st[i]!
      const isTail = (tot[i] ?? 0) > p99
      const acc = isTail ? tailAcc : restAcc
      const { work, covered: c } = inside(a, b)
      if (isTail) {
        tail++
        tailMs += b - a
        covered += c
      }
      for (const [label, ms] of work) {
        const x = acc.get(label) ?? [0, 0]
        x[0]++
        x[1] += ms
        acc.set(label, x)
      }
    }
    const rest = Math.max(1, st.length - tail)
    const labels = new Set([...tailAcc.keys(), ...restAcc.keys()])
    const lines = [...labels].map((label) => {
      const t = tailAcc.get(label) ?? [0, 0]
      const r = restAcc.get(label) ?? [0, 0]
      return {
        label,
        tailShare: t[0] / Math.max(1, tail),
        restShare: r[0] / rest,
        tailMs: t[1] / Math.max(1, tail),
        restMs: r[1] / rest,
      }
    })
    lines.sort((x, y) => y.tailMs - y.restMs - (x.tailMs - x.restMs))
    targets.push({
      target,
      requests: st.length,
      p50Us: quantile(s, 0.5),
      p99Us: p99,
      tail,
      tailCoveredMs: covered / Math.max(1, tail),
      tailMeanMs: tailMs / Math.max(1, tail),
      lines: lines.slice(0, 12),
    })
  }
  const per = new Map<string, PeriodicLine>()
  for (const e of events) {
    if (e[0] === 'fetch') continue
    const label = key(e)
    const p = per.get(label) ?? { label, count: 0, totalMs: 0, maxMs: 0, over1ms: 0 }
    p.count++
    p.totalMs += e[2]
    p.maxMs = Math.max(p.maxMs, e[2])
    if (e[2] > 1) p.over1ms++
    per.set(label, p)
  }
  const periodic = [...per.values()].sort((a, b) => b.maxMs - a.maxMs).slice(0, 15)
  return { targets, periodic, events: events.length }
}

const pct = (x: number) => `${Math.round(x * 100)} %`
const ms = (x: number) => x.toFixed(3)

/** The timeline as markdown, for the log and the doc page. */
export function renderTimeline(t: Timeline): string {
  const out: string[] = []
  for (const x of t.targets) {
    out.push(
      `**${x.target}**: ${x.requests} requests, p50 ${Math.round(x.p50Us)} µs, p99 ${Math.round(x.p99Us)} µs; ${x.tail} over p99, ` +
        `each ${ms(x.tailMeanMs)} ms on average, of which ${ms(x.tailCoveredMs)} ms in traced work.`,
      '',
      '| work during the request | tail: share / ms each | rest: share / ms each |',
      '|---|---|---|',
      ...x.lines.map(
        (l) =>
          `| ${l.label.replace(/\|/g, '\\|')} | ${pct(l.tailShare)} / ${ms(l.tailMs)} | ${pct(l.restShare)} / ${ms(l.restMs)} |`,
      ),
      '',
    )
  }
  out.push(
    `Over the whole traced run (${t.events} events), the work with the longest single runs:`,
    '',
    '| work | runs | total ms | longest ms | runs > 1 ms |',
    '|---|---|---|---|---|',
    ...t.periodic.map(
      (p) =>
        `| ${p.label.replace(/\|/g, '\\|')} | ${p.count} | ${ms(p.totalMs)} | ${ms(p.maxMs)} | ${p.over1ms} |`,
    ),
  )
  return out.join('\n')
}
