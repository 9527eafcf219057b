/**
 * @module
 * The c=1 lane's client (onthebench's definitions): one request at a time, in interleaved rounds —
 * each round sends a batch to every target in turn (the first target rotating round by round), so
 * whatever the machine does meanwhile falls on all targets alike. Per request it records, in µs:
 * non-stream, send to the last body byte; stream, send to the first content byte (the first read
 * holding a delta with non-empty `content`) and to the end; and, for the inter-event targets, the
 * gaps between successive reads of a paced stream. With `stamps` each request's wall-clock start
 * and end (ms since the epoch, performance.timeOrigin based) go back too, so a traced gateway's
 * timeline can be cut to the requests that landed in the tail. Runs as its own process.
 */
import { join } from 'node:path'
import { runChild } from './processes.ts'
import { emitResult, type Target } from './workload.ts'

export interface LaneTarget extends Target {
  name: string
  stream: boolean
}

export interface LaneArgs {
  targets: LaneTarget[]
  rounds: number
  /** Requests per target per round. */
  batch: number
  /** Requests per target sent before round 1, not counted (JIT, connection pools). */
  warm: number
  stamps: boolean
  /** Paced streams (one event every few ms): only the inter-event gaps are kept. */
  gaps: boolean
}

export interface LaneSamples {
  /** Per target, per round: µs to the last byte. */
  total: Record<string, number[][]>
  /** Per target, per round: µs to the first content byte (streams only). */
  first: Record<string, number[][]>
  /** Per target: every inter-read gap, µs (gaps mode). */
  gaps: Record<string, number[]>
  /** Per target, in order sent: [start, end] epoch ms (stamps mode). */
  stamps: Record<string, [number, number][]>
  /**
   * Per target: requests that failed (a status other than 200, a connection reset mid-stream),
   * each resent so that every round holds `batch` samples a target: the losses, reported.
   */
  errors: Record<string, number>
  /** Per target: each failure's message and how many times it was seen. */
  why: Record<string, Record<string, number>>
}

/** `batch` requests to `target`, one at a time, nothing stamped: the probes' load (c1-perf, c1-syscalls, …). */
export const oneAtATime = (target: LaneTarget, batch: number): Promise<LaneSamples> =>
  runLaneClient({ targets: [target], rounds: 1, batch, warm: 0, stamps: false, gaps: false })

export function runLaneClient(args: LaneArgs): Promise<LaneSamples> {
  // A generous bound: a round of c=1 requests on a loaded machine is slow, never minutes.
  const n = args.targets.length * (args.rounds * args.batch + args.warm)
  return runChild<LaneSamples>(join(import.meta.dir, 'c1-client.ts'), args, 120_000 + n * 100)
}

const CONTENT = /"content":"[^"]/
const dec = new TextDecoder()
const epoch = () => performance.timeOrigin + performance.now()

interface One {
  total: number
  first: number
  gaps: number[]
  start: number
  end: number
}

async function one(t: LaneTarget, wantGaps: boolean): Promise<One> {
  const start = epoch()
  const t0 = performance.now()
  const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body })
  if (res.status !== 200) {
    await res.arrayBuffer()
    throw new Error(`status_${res.status}`)
  }
  let first = Number.NaN
  const gaps: number[] = []
  if (t.stream) {
    const reader = res.body!.getReader()
    let last = Number.NaN
    for (;;) {
      const r = await reader.read()
      if (r.done) break
      const now = performance.now()
      if (wantGaps && !Number.isNaN(last)) gaps.push((now - last) * 1000)
      last = now
      if (Number.isNaN(first) && CONTENT.test(dec.decode(r.value))) first = (now - t0) * 1000
    }
  } else {
    await res.arrayBuffer()
  }
  const total = (performance.now() - t0) * 1000
  return { total, first, gaps, start, end: epoch() }
}

async function main(a: LaneArgs): Promise<void> {
  const out: LaneSamples = { total: {}, first: {}, gaps: {}, stamps: {}, errors: {}, why: {} }
  for (const t of a.targets) {
    out.total[t.name] = []
    out.first[t.name] = []
    out.gaps[t.name] = []
    out.stamps[t.name] = []
    out.errors[t.name] = 0
    out.why[t.name] = {}
    for (let i = 0; i < a.warm; i++) await one(t, false).catch(() => {})
  }
  for (let r = 0; r < a.rounds; r++) {
    for (let k = 0; k < a.targets.length; k++) {
      const t = a.targets[(k + r) % a.targets.length]!
      const total: number[] = []
      const first: number[] = []
      // A failed request is resent (Caddy 2.6 resets ~0.5–1 % of its streams: docs/benchmarks/
      // suite-cpu.md, stop 61), so that a target's percentiles are over as many samples as the
      // others'; a target failing as often as it serves is given up for the round.
      let failed = 0
      while (total.length < a.batch && failed <= a.batch) {
        try {
          const x = await one(t, a.gaps)
          total.push(x.total)
          if (t.stream) first.push(x.first)
          if (a.gaps) out.gaps[t.name]!.push(...x.gaps)
          if (a.stamps) out.stamps[t.name]!.push([x.start, x.end])
        } catch (err) {
          failed++
          out.errors[t.name]!++
          const why = out.why[t.name]!
          const msg = (err as Error).message
          why[msg] = (why[msg] ?? 0) + 1
        }
      }
      out.total[t.name]!.push(total)
      out.first[t.name]!.push(first)
    }
  }
  emitResult(out)
}

if (import.meta.main) await main(JSON.parse(process.argv[2]!) as LaneArgs)
