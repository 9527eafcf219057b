/**
 * @module
 * Tokens and money on the hot path (DESIGN §11): the same priced mock route, the same load, from a
 * key whose plan sets no token or money limit and from one whose plan sets TPM, TPD and a monthly
 * budget (each too large to refuse: every request reserves, is admitted and settles). Closed loop
 * at c16, both modes, interleaved and repeated. The target: CPU per request within 10 % of the
 * unmetered route.
 */
import { join } from 'node:path'
import { cpuMicros } from './proc-stats.ts'
import { cliJson, gatewayCli, PRICED_MODEL } from './processes.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, closedLoad, counted, type Forwarded, MODES, type Mode } from './scenarios.ts'
import { chatTarget } from './workload.ts'

export const TOKENS_CONCURRENCY = 16

type Route = 'plain' | 'metered'
export type TokensResult = Record<Mode, Record<Route, { rps: number[]; cpuUs: number[] }>>

export async function runTokens(ctx: Ctx, fwd: Forwarded, binary: boolean): Promise<TokensResult> {
  const { gw, plan } = ctx
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
  const c = TOKENS_CONCURRENCY
  const out = {} as TokensResult
  for (const mode of MODES) {
    const stream = mode === 'stream'
    const targets: Record<Route, ReturnType<typeof chatTarget>> = {
      plain: chatTarget(gw.url, `mock/${PRICED_MODEL}`, stream, gw.key),
      metered: chatTarget(gw.url, `mock/${PRICED_MODEL}`, stream, metered.key),
    }
    out[mode] = { plain: { rps: [], cpuUs: [] }, metered: { rps: [], cpuUs: [] } }
    for (let rep = 0; rep < plan.repeats; rep++) {
      for (const route of ['plain', 'metered'] as const) {
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
