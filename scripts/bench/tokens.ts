/**
 * @module
 * Tokens and money on the hot path (DESIGN §11): the same priced mock route, the same load, from a
 * key whose plan sets no token or money limit and from one whose plan sets TPM, TPD and a monthly
 * budget (each too large to refuse: every request reserves, is admitted and settles). Closed loop
 * at c16, both modes, interleaved and repeated. The target: CPU per request within 10 % of the
 * unmetered route.
 */
import { join } from 'node:path'
import { cliJson, gatewayCli, PRICED_MODEL } from './processes.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, type Forwarded, MODES, type RoutesResult, runInterleaved } from './scenarios.ts'
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
  const key = { plain: gw.key, metered: metered.key }
  return runInterleaved(ctx, fwd, TOKENS_CONCURRENCY, ['plain', 'metered'] as const, (route, stream) =>
    chatTarget(gw.url, `mock/${PRICED_MODEL}`, stream, key[route]),
  )
}

export function tokensRows(result: TokensResult): Row[] {
  return MODES.map((mode) => {
    const plain = series(result[mode].plain.cpuUs)
    const metered = series(result[mode].metered.cpuUs)
    const what = mode === 'stream' ? 'stream' : 'non-stream'
    const ratio = metered.median / plain.median
    return row(
      `gateway CPU per request, ${what} c${TOKENS_CONCURRENCY}: TPM, TPD and a budget (reserve + settle) vs no token limits`,
      `${fmtSeries(metered, 0, 'µs')} vs ${fmtSeries(plain, 0, 'µs')} (${fmt(ratio, 3)} ×)`,
      ratio,
      { op: '<=', value: 1.1, text: '≤ 1.10 ×' },
    )
  })
}
