/**
 * @module
 * Tokens and money on the hot path (DESIGN §11): the same priced mock route, the same load, from a
 * key whose plan sets no token or money limit and from one whose plan sets TPM, TPD and a monthly
 * budget (each too large to refuse: every request reserves, is admitted and settles). Closed loop
 * at c16, both modes, both routes warmed, then interleaved A B, B A, ... in 10 repetitions of 4 s
 * (the full plan's; the gateway's CPU per request swings ±10 % from one second to the next under
 * a constant load, measured: many runs side by side measure the difference, not the swing). The
 * target: CPU per request within 10 % of the unmetered route, judged on the median of the
 * repetitions' ratios (each metered run against the plain run next to it); the ratio of the
 * medians is shown beside it.
 */
import { join } from 'node:path'
import { cliJson, gatewayCli, PRICED_MODEL } from './processes.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import {
  type Ctx,
  type Forwarded,
  MODES,
  pairedRatios,
  type RoutesResult,
  runInterleaved,
} from './scenarios.ts'
import { chatTarget } from './workload.ts'

export const TOKENS_CONCURRENCY = 16

type Route = 'plain' | 'metered'
export type TokensResult = RoutesResult<Route>

export async function runTokens(ctx: Ctx, fwd: Forwarded, binary: boolean): Promise<TokensResult> {
  const { gw } = ctx
  const common = ['--config', join(ctx.dir, 'switchyard.yaml'), '--db', gw.dbPath, '--json']
  await cliJson([
    ...gatewayCli(binary),
    'accounts',
    'create',
    'bench-metered',
    '--plan',
    'metered',
    ...common,
  ])
  const metered = (await cliJson([...gatewayCli(binary), 'keys', 'create', 'bench-metered', ...common])) as {
    key: string
  }
  // Its requests count in the check that the gateway forwarded what it admitted.
  gw.keys.push(metered.key)
  const key = { plain: gw.key, metered: metered.key }
  return runInterleaved(
    ctx,
    fwd,
    TOKENS_CONCURRENCY,
    ['plain', 'metered'] as const,
    (route, stream) => chatTarget(gw.url, `mock/${PRICED_MODEL}`, stream, key[route]),
    { repeats: 3 * ctx.plan.repeats + 1, closedS: Math.min(4, ctx.plan.closedS) },
  )
}

export function tokensRows(result: TokensResult): Row[] {
  return MODES.map((mode) => {
    const plain = series(result[mode].plain.cpuUs)
    const metered = series(result[mode].metered.cpuUs)
    const what = mode === 'stream' ? 'stream' : 'non-stream'
    const paired = series(pairedRatios(plain.values, metered.values))
    return row(
      `gateway CPU per request, ${what} c${TOKENS_CONCURRENCY}: TPM, TPD and a budget (reserve + settle) vs no token limits`,
      `${fmtSeries(paired, 3, '×')} run by run; ${fmtSeries(metered, 0, 'µs')} vs ${fmtSeries(plain, 0, 'µs')} (medians: ${fmt(metered.median / plain.median, 3)} ×)`,
      paired.median,
      { op: '<=', value: 1.1, text: '≤ 1.10 ×' },
    )
  })
}
