/**
 * @module
 * The lane's warm-up to steady state (issue 46). A Bun process's JIT keeps compiling long after
 * its first requests: JSC's top tier (FTL) compiled the gateway's functions over its first
 * ~12,000 requests, 10–15 ms of a core each (docs/benchmarks/2026-11-29-tail.md, third pass). A
 * gateway in production lives past that; a lane that measured it meanwhile would charge the
 * compiles to the gateway's latency and throughput. So each Bun target takes `requests` (half
 * stream) in closed loop first, and more while its JIT threads (`JITWorker`) still spend more
 * than `JIT_FLAT_US` a request, up to `MAX_S`. Caddy and direct take a short share too (cheap), so
 * every row is measured alike.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { fmt, type Row, row } from './report.ts'
import { type Ctx, closedLoad } from './scenarios.ts'
import { chatTarget, type Target } from './workload.ts'

/** One process to warm: its targets (non-stream, stream) by key; pid null for one not ours to read (Caddy, the mock). */
export interface WarmProc {
  name: string
  pid: number | null
  targets: { nonstream: Target; stream: Target }[]
}

export interface Warmed {
  name: string
  requests: number
  seconds: number
  /** µs of the JIT threads a request, per window (two closed-loop seconds, both modes): flat at the end. */
  jitUs: number[]
}

/** JIT CPU a request below which the compiles count as done (the bare prototype: 0–11). */
export const JIT_FLAT_US = 10
const MAX_S = 60
const CONNECTIONS = 8

/** ns on a core of `pid`'s JIT threads (0 when it cannot be read). */
function jitNs(pid: number): number {
  let ns = 0
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() !== 'JITWorker') continue
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      } catch {}
    }
  } catch {}
  return ns
}

/** How much: `requests` each Bun process at least (then on until its JIT is flat when `untilFlat`), `fewer` the others. */
export interface SteadySize {
  requests: number
  fewer: number
  untilFlat: boolean
}

/**
 * The full run: past the ~12,000 requests FTL compiled through, then until flat (measured at load
 * 16–20: a gateway takes 15,000 at c8 in ~10–20 s). `--quick` stays small and says so.
 */
export const STEADY_FULL: SteadySize = { requests: 15_000, fewer: 2_000, untilFlat: true }
export const STEADY_QUICK: SteadySize = { requests: 2_000, fewer: 500, untilFlat: false }
export const STEADY_NONE: SteadySize = { requests: 0, fewer: 0, untilFlat: false }

/** Warms each process in turn. */
export async function warmToSteady(ctx: Ctx, procs: WarmProc[], size: SteadySize): Promise<Warmed[]> {
  const out: Warmed[] = []
  if (size.requests === 0) return out
  for (const p of procs) {
    const t0 = performance.now()
    const want = p.pid === null ? size.fewer : size.requests
    const w: Warmed = { name: p.name, requests: 0, seconds: 0, jitUs: [] }
    // JIT threads exit when idle, taking their time with them: a window can under-read a compile
    // on a thread that ended inside it, hence two windows in a row under the bound.
    for (;;) {
      const jit0 = p.pid === null ? 0 : jitNs(p.pid)
      let n = 0
      for (const t of p.targets)
        for (const target of [t.nonstream, t.stream])
          n += (await closedLoad(ctx, target, CONNECTIONS, 1)).requests
      w.requests += n
      if (p.pid !== null) w.jitUs.push(Math.max(0, jitNs(p.pid) - jit0) / 1000 / Math.max(1, n))
      const flat =
        !size.untilFlat ||
        p.pid === null ||
        (w.jitUs.length >= 2 && w.jitUs.slice(-2).every((x) => x < JIT_FLAT_US))
      if ((w.requests >= want && flat) || performance.now() - t0 > MAX_S * 1000) break
    }
    w.seconds = (performance.now() - t0) / 1000
    ctx.log(
      `  warmed ${p.name}: ${w.requests} requests in ${w.seconds.toFixed(0)} s` +
        (w.jitUs.length ? `, JIT µs a request by window ${w.jitUs.map((x) => x.toFixed(0)).join(' ')}` : ''),
    )
    out.push(w)
  }
  return out
}

/** A chat route's two targets on `url` (`model`, `key`). */
export const chatPair = (url: string, model: string, key?: string): WarmProc['targets'][number] => ({
  nonstream: chatTarget(url, model, false, key),
  stream: chatTarget(url, model, true, key),
})

/** The lane's row saying how each process was warmed (none when it was not). */
export function warmRows(warmed: Warmed[]): Row[] {
  if (!warmed.length) return []
  const last = (w: Warmed) => w.jitUs.slice(-2).map((x) => x.toFixed(0))
  const text = warmed.map(
    (w) =>
      `${w.name} ${fmt(w.requests)} in ${w.seconds.toFixed(0)} s${w.jitUs.length ? ` (${last(w).join(', ')})` : ''}`,
  )
  const label =
    'c=1 warm-up to steady state before the lane (closed loop c8, half stream; JIT µs a request, last windows)'
  return [row(label, text.join('; '), 0, null)]
}
