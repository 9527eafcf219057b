/**
 * @module
 * The attempt loop's cost on the happy path (DESIGN §10): the same mock route measured with and
 * without a fallback configured (`mock/bench` and `mock/bench-fb`, whose `fallbacks` name
 * `mock50/bench`; no fault, so the fallback is never called), closed loop at c16, both modes,
 * interleaved and repeated. The CPU per request should be within noise of each other.
 */
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, type Forwarded, MODES, type RoutesResult, runInterleaved } from './scenarios.ts'
import { chatTarget } from './workload.ts'

export const FALLBACK_CONCURRENCY = 16

type Route = 'plain' | 'fallback'
export type FallbackResult = RoutesResult<Route>

export async function runFallback(ctx: Ctx, fwd: Forwarded): Promise<FallbackResult> {
  const { gw } = ctx
  const model = { plain: 'mock/bench', fallback: 'mock/bench-fb' }
  return runInterleaved(ctx, fwd, FALLBACK_CONCURRENCY, ['plain', 'fallback'] as const, (route, stream) =>
    chatTarget(gw.url, model[route], stream, gw.key),
  )
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
