/**
 * @module
 * What telling the operator costs the hot path (DESIGN §15): the same priced route under the same
 * load on gateways of the same build, each started for this row, in three pairs — `telemetry`
 * (OTLP/HTTP protobuf to a local collector, `sample_ratio` 1: every request a request span and an
 * attempt span, exported in batches), `webhook` (a webhook subscribed to every event: the
 * threshold check after each usage flush) and `control` (a second gateway with neither) — each
 * beside an `off` of its own (no telemetry, no alerts). The key is on the metered plan (TPD and a
 * budget too large to cross) so the threshold check has rows to read.
 *
 * A round loads one pair at once (c16 each, each its own load generator): the machine's drift
 * falls on both. Its ratio is the CPU per request of the one over its `off`'s; a cell is the
 * median of its rounds'. Target: within 5 %. The two of a pair have the same history (the same
 * traffic at the same times, idle between their rounds alike); the cells' rounds are interleaved
 * (round i of each, in an order rotated every round), so a drift over minutes falls on every cell
 * alike, and which generator starts first alternates. `control` is what two processes of one
 * config read here: the bench's own floor, shown beside the judged rows (not subtracted).
 */
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { cpuMicros, cpuMicrosByThread } from './proc-stats.ts'
import { type Gateway, METERED_PLAN, PRICED_MODEL, startGateway } from './processes.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, closedLoad, counted, type Forwarded, MODES, type Mode } from './scenarios.ts'
import { chatTarget } from './workload.ts'

export const SIGNALS_CONCURRENCY = 16

type Variant = 'telemetry' | 'webhook' | 'control'
const VARIANTS: Variant[] = ['telemetry', 'webhook', 'control']

/** Per thread name (proc-stats.ts), each round's CPU per request (µs). */
type ByThread = Record<string, number[]>

export type SignalsResult = Record<
  Mode,
  Record<Variant, { ratios: number[]; off: number[]; on: number[]; threads: { off: ByThread; on: ByThread } }>
>

/** A sink for spans and deliveries: answers 200 to anything, reads nothing it is not sent. */
function startSink() {
  let requests = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      await req.arrayBuffer()
      requests++
      return new Response(null, { status: 200 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, requests: () => requests, stop: () => server.stop(true) }
}

export async function runSignals(
  ctx: Ctx,
  fwd: Forwarded,
  opts: { binary: boolean; env?: Record<string, string>; bunFlags?: string[] },
): Promise<SignalsResult> {
  const sink = startSink()
  const started: Array<{ gw: Gateway; remove(): void }> = []
  const start = async (name: string, edit: (d: Record<string, unknown>) => Record<string, unknown>) => {
    const dir = join(ctx.dir, `signals-${name}`)
    mkdirSync(dir)
    const ws = { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
    const gw = await startGateway(ws, ctx.mocks, {
      binary: opts.binary,
      env: opts.env,
      bunFlags: opts.bunFlags,
      plan: 'metered',
      doc: edit,
    })
    started.push({ gw, remove: ws.remove })
    return { ...ctx, gw, dir }
  }
  try {
    const plain = (d: Record<string, unknown>) => ({
      ...d,
      plans: { ...(d.plans as object), metered: METERED_PLAN },
    })
    // Each cell its own `off`: a gateway shared by every cell served three times the traffic of
    // the one it was set against and never idled between rounds, and read 1.09 × cheaper than an
    // identical second one (the control) at load 12 (measured: run of 06:37, 2026-11-29).
    const off: Record<Variant, Ctx> = {
      telemetry: await start('telemetry-off', plain),
      webhook: await start('webhook-off', plain),
      control: await start('control-off', plain),
    }
    const on: Record<Variant, Ctx> = {
      telemetry: await start('telemetry', (d) => ({
        ...plain(d),
        telemetry: { otlp_endpoint: sink.url, protocol: 'http/protobuf', sample_ratio: 1 },
      })),
      webhook: await start('webhook', (d) => ({
        ...plain(d),
        alerts: {
          webhooks: [
            {
              url: `${sink.url}/hook`,
              secret: 'bench-secret-0123456789',
              events: [
                'budget.threshold',
                'tokens.threshold',
                'circuit.opened',
                'circuit.closed',
                'key.suspended',
              ],
            },
          ],
        },
      })),
      control: await start('control', plain),
    }
    const pairs = ctx.plan.pairs ?? 3 * ctx.plan.repeats + 1
    const seconds = Math.min(4, ctx.plan.closedS)
    const out = {} as SignalsResult
    for (const mode of MODES) {
      const cells = {} as SignalsResult[Mode]
      out[mode] = cells
      for (const v of VARIANTS) cells[v] = { ratios: [], off: [], on: [], threads: { off: {}, on: {} } }
      const round = (v: Variant, i: number) =>
        pairRound(ctx, fwd, [off[v], on[v]], mode, seconds, i % 2 === 1)
      for (const v of VARIANTS) await round(v, 0) // warm each on this route
      for (let i = 0; i < pairs; i++) {
        for (let j = 0; j < VARIANTS.length; j++) {
          const v = VARIANTS[(i + j) % VARIANTS.length]!
          const [[o, x], [to, tx]] = await round(v, i)
          const cell = cells[v]
          addThreads(cell.threads.off, to)
          addThreads(cell.threads.on, tx)
          cell.ratios.push(x / o)
          cell.off.push(o)
          cell.on.push(x)
          ctx.log(
            `  ${mode} ${v} round ${i + 1}: off ${Math.round(o)} µs/req, on ${Math.round(x)}: ${fmt(x / o, 3)} ×`,
          )
        }
      }
    }
    // Where each cell's CPU went, by thread (a sampling profile sees the main thread only).
    for (const mode of MODES)
      for (const v of VARIANTS) {
        const t = out[mode][v].threads
        const names = [...new Set([...Object.keys(t.off), ...Object.keys(t.on)])]
        const med = (x: number[] | undefined) => Math.round(series(x ?? []).median)
        const parts = names.map((n) => `${n} ${med(t.off[n])} → ${med(t.on[n])}`)
        ctx.log(`  ${mode} ${v}, µs a request by thread (off → on, medians): ${parts.join('; ')}`)
      }
    ctx.log(`  (the sink received ${sink.requests()} exports and deliveries)`)
    return out
  } finally {
    for (const s of started) {
      await s.gw.stop()
      s.remove()
    }
    await sink.stop()
  }
}

function addThreads(into: ByThread, round: Record<string, number>): void {
  for (const [name, us] of Object.entries(round)) {
    const list = into[name] ?? []
    list.push(us)
    into[name] = list
  }
}

async function pairRound(
  ctx: Ctx,
  fwd: Forwarded,
  sides: [Ctx, Ctx],
  mode: Mode,
  seconds: number,
  swapped: boolean,
): Promise<[[number, number], [Record<string, number>, Record<string, number>]]> {
  const stream = mode === 'stream'
  // The generators start in array order: which one starts first alternates by round.
  const order = swapped ? [sides[1], sides[0]] : sides
  const load = async (s: number) => {
    const runs = await Promise.all(
      order.map((side) =>
        closedLoad(
          side,
          chatTarget(side.gw.url, `mock/${PRICED_MODEL}`, stream, side.gw.key),
          SIGNALS_CONCURRENCY,
          s,
        ),
      ),
    )
    return swapped ? [runs[1]!, runs[0]!] : runs
  }
  return counted(
    ctx,
    fwd,
    !ctx.wrk,
    async () => {
      if (ctx.plan.warmS > 0) await load(ctx.plan.warmS)
      const cpu0 = sides.map((s) => cpuMicros(s.gw.pid))
      const threads0 = sides.map((s) => cpuMicrosByThread(s.gw.pid))
      const runs = await load(seconds)
      const perRequest = sides.map(
        (s, i) => (cpuMicros(s.gw.pid) - cpu0[i]!) / Math.max(1, runs[i]!.requests),
      ) as [number, number]
      const threads = sides.map((s, i) => {
        const out: Record<string, number> = {}
        for (const [name, us] of Object.entries(cpuMicrosByThread(s.gw.pid)))
          out[name] = (us - (threads0[i]![name] ?? 0)) / Math.max(1, runs[i]!.requests)
        return out
      }) as [Record<string, number>, Record<string, number>]
      return [perRequest, threads] as [[number, number], [Record<string, number>, Record<string, number>]]
    },
    sides.map((s) => s.gw),
  )
}

export function signalsRows(result: SignalsResult): Row[] {
  return MODES.flatMap((mode) =>
    VARIANTS.map((v) => {
      const r = result[mode][v]
      const ratios = series(r.ratios)
      const what = mode === 'stream' ? 'stream' : 'non-stream'
      const which =
        v === 'telemetry'
          ? 'telemetry on (OTLP protobuf, sample 1.0)'
          : v === 'webhook'
            ? 'a webhook configured (every event)'
            : 'control: a second gateway with neither (the bench’s floor)'
      return row(
        `gateway CPU per request, ${what} c${SIGNALS_CONCURRENCY}: ${which} vs neither, two gateways at once`,
        `${fmtSeries(ratios, 3, '×')} round by round; ${fmtSeries(series(r.on), 0, 'µs')} vs ${fmtSeries(series(r.off), 0, 'µs')}`,
        ratios.median,
        v === 'control' ? null : { op: '<=', value: 1.05, text: '≤ 1.05 ×' },
      )
    }),
  )
}
