/**
 * @module
 * What an alias and a virtual model cost on the happy path (DESIGN §13): the same mock route named
 * directly (`mock/bench`), through an alias (`bench/alias` → `mock/bench`) and through a 1:1 pool
 * (`bench/pool` → `mock/bench`, `mock/bench-pool`: the same upstream model under a second name),
 * closed loop at c16, both modes, interleaved and repeated. The CPU per request should be within
 * noise of each other.
 */
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, type Forwarded, MODES, type RoutesResult, runInterleaved } from './scenarios.ts'
import { chatTarget } from './workload.ts'

export const ALIASES_CONCURRENCY = 16

type Route = 'direct' | 'alias' | 'pool'
export type AliasesResult = RoutesResult<Route>

export async function runAliases(ctx: Ctx, fwd: Forwarded): Promise<AliasesResult> {
  const { gw } = ctx
  const model = { direct: 'mock/bench', alias: 'bench/alias', pool: 'bench/pool' }
  return runInterleaved(
    ctx,
    fwd,
    ALIASES_CONCURRENCY,
    ['direct', 'alias', 'pool'] as const,
    (route, stream) => chatTarget(gw.url, model[route], stream, gw.key),
  )
}

export function aliasesRows(result: AliasesResult): Row[] {
  const rows: Row[] = []
  for (const mode of MODES) {
    const direct = series(result[mode].direct.cpuUs)
    const what = mode === 'stream' ? 'stream' : 'non-stream'
    for (const route of ['alias', 'pool'] as const) {
      const s = series(result[mode][route].cpuUs)
      const named = route === 'alias' ? 'an alias' : 'a 1:1 pool (virtual model)'
      rows.push(
        row(
          `gateway CPU per request, ${what} c${ALIASES_CONCURRENCY}: ${named} vs the model named directly`,
          `${fmtSeries(s, 0, 'µs')} vs ${fmtSeries(direct, 0, 'µs')} (${fmt(s.median / direct.median, 3)} ×)`,
          s.median,
          null,
        ),
      )
    }
  }
  return rows
}
