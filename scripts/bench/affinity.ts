/**
 * @module
 * Session affinity's cost (DESIGN §14): the mock route behind a pool of two keys (`mockpool/bench`),
 * requests carrying a `prompt_cache_key` (each picks its session's key: a hash and a table lookup)
 * against the same requests without one (smooth weighted round-robin), closed loop at c16, both
 * modes, interleaved and repeated. The CPU per request should be within noise of each other.
 */
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, type Forwarded, MODES, type RoutesResult, runInterleaved } from './scenarios.ts'
import { chatTarget } from './workload.ts'

export const AFFINITY_CONCURRENCY = 16

type Route = 'round-robin' | 'affinity'
export type AffinityResult = RoutesResult<Route>

export async function runAffinity(ctx: Ctx, fwd: Forwarded): Promise<AffinityResult> {
  const { gw } = ctx
  return runInterleaved(
    ctx,
    fwd,
    AFFINITY_CONCURRENCY,
    ['round-robin', 'affinity'] as const,
    (route, stream) => {
      const target = chatTarget(gw.url, 'mockpool/bench', stream, gw.key)
      if (route === 'round-robin') return target
      const body = { ...JSON.parse(target.body), prompt_cache_key: '01a22740-2a99-7721-a9d8-d5cb9ba38307' }
      return { ...target, body: JSON.stringify(body) }
    },
  )
}

export function affinityRows(result: AffinityResult): Row[] {
  return MODES.map((mode) => {
    const rr = series(result[mode]['round-robin'].cpuUs)
    const aff = series(result[mode].affinity.cpuUs)
    const what = mode === 'stream' ? 'stream' : 'non-stream'
    return row(
      `gateway CPU per request, ${what} c${AFFINITY_CONCURRENCY}, a pool of two keys: with a prompt_cache_key (session affinity) vs without (round-robin)`,
      `${fmtSeries(aff, 0, 'µs')} vs ${fmtSeries(rr, 0, 'µs')} (${fmt(aff.median / rr.median, 3)} ×)`,
      aff.median,
      null,
    )
  })
}
