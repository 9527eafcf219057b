/**
 * @module
 * The attempt loop's cost on the happy path (DESIGN §10): the same mock route measured with and
 * without a fallback configured (`mock/bench` and `mock/bench-fb`, whose `fallbacks` name
 * `mock50/bench`; no fault, so the fallback is never called), closed loop at c16, both modes,
 * interleaved and repeated. The CPU per request should be within noise of each other.
 */
import { cpuMicros } from './proc-stats.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, closedLoad, counted, type Forwarded, MODES, type Mode } from './scenarios.ts'
import { chatTarget } from './workload.ts'

export const FALLBACK_CONCURRENCY = 16

type Route = 'plain' | 'fallback'
export type FallbackResult = Record<Mode, Record<Route, { rps: number[]; cpuUs: number[] }>>

export async function runFallback(ctx: Ctx, fwd: Forwarded): Promise<FallbackResult> {
  const { gw, plan } = ctx
  const c = FALLBACK_CONCURRENCY
  const out = {} as FallbackResult
  for (const mode of MODES) {
    const stream = mode === 'stream'
    const targets: Record<Route, ReturnType<typeof chatTarget>> = {
      plain: chatTarget(gw.url, 'mock/bench', stream, gw.key),
      fallback: chatTarget(gw.url, 'mock/bench-fb', stream, gw.key),
    }
    out[mode] = { plain: { rps: [], cpuUs: [] }, fallback: { rps: [], cpuUs: [] } }
    for (let rep = 0; rep < plan.repeats; rep++) {
      for (const route of ['plain', 'fallback'] as const) {
        const r = await counted(ctx, fwd, !ctx.wrk, async () => {
          if (plan.warmS > 0) await closedLoad(ctx, targets[route], c, plan.warmS)
          const cpu0 = cpuMicros(gw.pid)
          const res = await closedLoad(ctx, targets[route], c, plan.closedS)
          out[mode][route].cpuUs.push((cpuMicros(gw.pid) - cpu0) / Math.max(1, res.requests))
          return res
        })
        out[mode][route].rps.push(r.rps)
        ctx.log(
          `  ${mode} ${route} c${c} #${rep + 1}: ${Math.round(r.rps)} req/s cpu ${Math.round(out[mode][route].cpuUs.at(-1)!)} µs/req`,
        )
      }
    }
  }
  return out
}

export function fallbackRows(result: FallbackResult): Row[] {
  const rows: Row[] = []
  for (const mode of MODES) {
    const plain = series(result[mode].plain.cpuUs)
    const fb = series(result[mode].fallback.cpuUs)
    const what = mode === 'stream' ? 'stream' : 'non-stream'
    rows.push(
      row(
        `gateway CPU per request, ${what} c${FALLBACK_CONCURRENCY}: a fallback configured (no fault) vs none`,
        `${fmtSeries(fb, 0, 'µs')} vs ${fmtSeries(plain, 0, 'µs')} (${fmt(fb.median / plain.median, 3)} ×)`,
        fb.median,
        null,
      ),
    )
  }
  return rows
}
