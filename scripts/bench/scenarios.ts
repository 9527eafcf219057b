/**
 * @module
 * The measured scenarios, each run direct-to-mock and through the gateway, repeated and
 * interleaved (direct, gateway, direct, ...) so slow drift on a shared machine hits both sides:
 * closed-loop throughput at fixed concurrencies, open-loop added latency at a fixed rate, and
 * many slow streams held open at once.
 */
import { runBunLoad } from './loadgen-bun.ts'
import { runWrk } from './loadgen-wrk.ts'
import { type OpenLoopResult, runOpenLoop } from './open-loop.ts'
import { type OpenStreamsResult, runOpenStreams } from './open-streams.ts'
import { cpuMicros, rssBytes } from './proc-stats.ts'
import { type Gateway, type Mocks, usageRequests } from './processes.ts'
import { chatTarget, type LoadResult, messagesTarget, type Target } from './workload.ts'

export interface Plan {
  repeats: number
  warmS: number
  closedS: number
  concurrencies: number[]
  openRate: number
  openWarmS: number
  openS: number
  streams: number
  streamsOpenTimeoutS: number
  streamsHoldS: number
  microIterations: number
  /** The waterfall's cold pass, seconds measured and warmed (waterfall.ts's 4 and 1 when unset). */
  cold?: { s: number; warmS: number }
  /** The crossed pairs of rounds a cell of tokens.ts and signals.ts takes (3 × repeats + 1 when unset). */
  pairs?: number
}

export interface Ctx {
  gw: Gateway
  mocks: Mocks
  wrk: { path: string; version: string } | null
  dir: string
  plan: Plan
  log: (line: string) => void
}

export type Mode = 'nonstream' | 'stream'
export const MODES: Mode[] = ['nonstream', 'stream']

export interface ClosedCell {
  direct: LoadResult[]
  gateway: LoadResult[]
  /** Gateway CPU µs per request, one per gateway run. */
  gatewayCpuUs: number[]
}

export interface OpenCell {
  direct: OpenLoopResult[]
  gateway: OpenLoopResult[]
  gatewayCpuUs: number[]
}

/**
 * Requests the gateway admitted (its /v1/usage count) against the requests the mocks received,
 * both counted while only gateway traffic ran. `drained` holds the runs whose generator waits
 * for every answer; wrk stops with requests in flight, which the gateway may have admitted and
 * then cancelled (499) before they reached the upstream, so its runs are counted apart.
 */
export interface Forwarded {
  drained: { admitted: number; mockRequests: number }
  cutOff: { admitted: number; mockRequests: number }
}

export const newForwarded = (): Forwarded => ({
  drained: { admitted: 0, mockRequests: 0 },
  cutOff: { admitted: 0, mockRequests: 0 },
})

export function closedLoad(ctx: Ctx, t: Target, connections: number, seconds: number): Promise<LoadResult> {
  return ctx.wrk
    ? runWrk(ctx.wrk.path, ctx.dir, t, connections, Math.max(1, Math.round(seconds)))
    : runBunLoad(t, connections, seconds)
}

const mockCount = (m: Mocks) => m.fast.stats.requests + m.slow.stats.requests

/**
 * Runs `fn` and adds what the gateway admitted and the mocks received meanwhile to `fwd`; `twins`:
 * other gateways sending to the same mocks meanwhile (their admissions count too).
 */
export async function counted<T>(
  ctx: Ctx,
  fwd: Forwarded,
  drained: boolean,
  fn: () => Promise<T>,
  twins: Gateway[] = [],
): Promise<T> {
  const admitted = async () => {
    let n = 0
    for (const gw of [ctx.gw, ...twins]) n += await usageRequests(gw)
    return n
  }
  const mock0 = mockCount(ctx.mocks)
  const admitted0 = await admitted()
  try {
    return await fn()
  } finally {
    const into = drained ? fwd.drained : fwd.cutOff
    into.mockRequests += mockCount(ctx.mocks) - mock0
    into.admitted += (await admitted()) - admitted0
  }
}

export async function runClosedMatrix(ctx: Ctx, fwd: Forwarded): Promise<Record<string, ClosedCell>> {
  const { gw, mocks, plan } = ctx
  const cells: Record<string, ClosedCell> = {}
  for (const mode of MODES) {
    const stream = mode === 'stream'
    const direct = chatTarget(mocks.fast.url, 'bench', stream)
    const viaGw = chatTarget(gw.url, 'mock/bench', stream, gw.key)
    for (const c of plan.concurrencies) {
      const cell: ClosedCell = { direct: [], gateway: [], gatewayCpuUs: [] }
      cells[`${mode}/c${c}`] = cell
      for (let rep = 0; rep < plan.repeats; rep++) {
        if (plan.warmS > 0) await closedLoad(ctx, direct, c, plan.warmS)
        const d = await closedLoad(ctx, direct, c, plan.closedS)
        cell.direct.push(d)
        const g = await counted(ctx, fwd, !ctx.wrk, () => gatewayRun(ctx, viaGw, c, cell.gatewayCpuUs))
        cell.gateway.push(g)
        ctx.log(
          `  ${mode} c${c} #${rep + 1}: direct ${Math.round(d.rps)} req/s p99 ${d.p99Ms.toFixed(2)} ms` +
            ` | gateway ${Math.round(g.rps)} req/s p99 ${g.p99Ms.toFixed(2)} ms` +
            ` cpu ${Math.round(cell.gatewayCpuUs.at(-1)!)} µs/req${d.errors + g.errors ? ` errors ${d.errors}/${g.errors}` : ''}`,
        )
      }
    }
  }
  return cells
}

/**
 * `/v1/messages` passed through to an anthropic provider (the recorded text stream) against the
 * same requests sent straight to the Anthropic mock, closed loop at the highest concurrency.
 */
export async function runMessagesPassThrough(ctx: Ctx): Promise<Record<string, ClosedCell>> {
  const { gw, mocks, plan } = ctx
  const c = plan.concurrencies.at(-1)!
  const direct = messagesTarget(mocks.anthropic.url, 'bench')
  const viaGw = messagesTarget(gw.url, 'anth/bench', gw.key)
  const cell: ClosedCell = { direct: [], gateway: [], gatewayCpuUs: [] }
  for (let rep = 0; rep < plan.repeats; rep++) {
    if (plan.warmS > 0) await closedLoad(ctx, direct, c, plan.warmS)
    const d = await closedLoad(ctx, direct, c, plan.closedS)
    cell.direct.push(d)
    if (plan.warmS > 0) await closedLoad(ctx, viaGw, c, plan.warmS)
    const cpu0 = cpuMicros(gw.pid)
    const g = await closedLoad(ctx, viaGw, c, plan.closedS)
    cell.gatewayCpuUs.push((cpuMicros(gw.pid) - cpu0) / Math.max(1, g.requests))
    cell.gateway.push(g)
    ctx.log(
      `  messages pass-through stream c${c} #${rep + 1}: direct ${Math.round(d.rps)} req/s | gateway ${Math.round(g.rps)} req/s` +
        `${d.errors + g.errors ? ` errors ${d.errors}/${g.errors}` : ''}`,
    )
  }
  return { [`messages/c${c}`]: cell }
}

export async function runOpenLoopMatrix(ctx: Ctx, fwd: Forwarded): Promise<Record<Mode, OpenCell>> {
  const { gw, mocks, plan } = ctx
  const cells = {} as Record<Mode, OpenCell>
  for (const mode of MODES) {
    const stream = mode === 'stream'
    const direct = chatTarget(mocks.slow.url, 'bench', stream)
    const viaGw = chatTarget(gw.url, 'mock50/bench', stream, gw.key)
    const cell: OpenCell = { direct: [], gateway: [], gatewayCpuUs: [] }
    cells[mode] = cell
    for (let rep = 0; rep < plan.repeats; rep++) {
      const d = await runOpenLoop(direct, plan.openRate, plan.openS, plan.openWarmS, stream)
      cell.direct.push(d)
      const g = await counted(ctx, fwd, true, async () => {
        const cpu0 = cpuMicros(gw.pid)
        const r = await runOpenLoop(viaGw, plan.openRate, plan.openS, plan.openWarmS, stream)
        // The warm-up requests ran under the same CPU window: divide by all that were sent.
        const sent = Math.round(plan.openRate * (plan.openS + plan.openWarmS))
        cell.gatewayCpuUs.push((cpuMicros(gw.pid) - cpu0) / sent)
        return r
      })
      cell.gateway.push(g)
      ctx.log(
        `  open ${plan.openRate}/s ${mode} #${rep + 1}: direct p50 ${d.p50Ms.toFixed(2)} p99 ${d.p99Ms.toFixed(2)} ms` +
          ` | gateway p50 ${g.p50Ms.toFixed(2)} p99 ${g.p99Ms.toFixed(2)} ms` +
          ` (added ${(g.p50Ms - d.p50Ms).toFixed(2)} / ${(g.p99Ms - d.p99Ms).toFixed(2)} ms)` +
          `${d.errors + g.errors ? ` errors ${d.errors}/${g.errors}` : ''}`,
      )
    }
  }
  return cells
}

export interface StreamsOutcome {
  client: OpenStreamsResult
  /** Streams the mock had started (and not seen aborted) when the client reported ready. */
  upstreamOpen: number
  /** Upstream streams cancelled after the client aborted (must equal those started). */
  upstreamStarted: number
  upstreamAborted: number
  rssBeforeBytes: number
  /** Highest VmRSS sampled while the streams were held. */
  rssOpenBytes: number
  rssAfterBytes: number
}

export async function runSlowStreams(ctx: Ctx): Promise<StreamsOutcome> {
  const { gw, mocks, plan } = ctx
  const stats = mocks.fast.stats
  const streams0 = stats.streams
  const aborted0 = stats.aborted
  const rssBeforeBytes = rssBytes(gw.pid)
  let ready = false
  let upstreamOpen = 0
  let rssOpenBytes = 0
  const sampler = setInterval(() => {
    if (ready) rssOpenBytes = Math.max(rssOpenBytes, rssBytes(gw.pid))
  }, 200)
  const target = chatTarget(gw.url, 'mock/slow-stream', true, gw.key)
  const client = await runOpenStreams(
    target,
    plan.streams,
    plan.streamsOpenTimeoutS,
    plan.streamsHoldS,
    () => {
      ready = true
      upstreamOpen = stats.streams - streams0 - (stats.aborted - aborted0)
      rssOpenBytes = Math.max(rssOpenBytes, rssBytes(gw.pid))
    },
  )
  clearInterval(sampler)
  // Give the gateway a moment to propagate the client aborts upstream.
  for (let i = 0; i < 20 && stats.aborted - aborted0 < stats.streams - streams0; i++) await Bun.sleep(250)
  return {
    client,
    upstreamOpen,
    upstreamStarted: stats.streams - streams0,
    upstreamAborted: stats.aborted - aborted0,
    rssBeforeBytes,
    rssOpenBytes,
    rssAfterBytes: rssBytes(gw.pid),
  }
}

/** CPU per request and throughput of each route, per mode and repetition. */
export type RoutesResult<R extends string> = Record<Mode, Record<R, { rps: number[]; cpuUs: number[] }>>

/**
 * The same load on each of `routes` through the gateway, both modes. Every route is warmed first
 * (each has code of its own to compile), then the routes run interleaved in every repetition, in
 * turn forward and backward (A B, B A, ...: a drift over the run hits them alike), the gateway's
 * CPU per request measured per run.
 */
export async function runInterleaved<R extends string>(
  ctx: Ctx,
  fwd: Forwarded,
  c: number,
  routes: readonly R[],
  targetOf: (route: R, stream: boolean) => Target,
): Promise<RoutesResult<R>> {
  const { plan } = ctx
  const out = {} as RoutesResult<R>
  for (const mode of MODES) {
    const stream = mode === 'stream'
    out[mode] = Object.fromEntries(
      routes.map((r) => [r, { rps: [], cpuUs: [] }]),
    ) as unknown as RoutesResult<R>[Mode]
    if (plan.warmS > 0)
      for (const route of routes)
        await counted(ctx, fwd, !ctx.wrk, () => closedLoad(ctx, targetOf(route, stream), c, 2 * plan.warmS))
    for (let rep = 0; rep < plan.repeats; rep++) {
      for (const route of rep % 2 ? [...routes].reverse() : routes) {
        const target = targetOf(route, stream)
        const cell = out[mode][route]
        const r = await counted(ctx, fwd, !ctx.wrk, () => gatewayRun(ctx, target, c, cell.cpuUs))
        cell.rps.push(r.rps)
        ctx.log(
          `  ${mode} ${route} c${c} #${rep + 1}: ${Math.round(r.rps)} req/s cpu ${Math.round(cell.cpuUs.at(-1)!)} µs/req`,
        )
      }
    }
  }
  return out
}

/** A warmed closed-loop run through the gateway; the gateway's CPU per request over it goes to `cpuUs`. */
async function gatewayRun(ctx: Ctx, target: Target, c: number, cpuUs: number[]) {
  const { gw, plan } = ctx
  if (plan.warmS > 0) await closedLoad(ctx, target, c, plan.warmS)
  const cpu0 = cpuMicros(gw.pid)
  const res = await closedLoad(ctx, target, c, plan.closedS)
  cpuUs.push((cpuMicros(gw.pid) - cpu0) / Math.max(1, res.requests))
  return res
}
