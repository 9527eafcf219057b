/**
 * @module
 * The Responses surface under closed-loop load, streaming, at one concurrency: the mock's own
 * `/v1/responses` (the baseline), the gateway translating to the mock's chat API (`mock/bench`),
 * and the gateway passing through to the mock's Responses API (`mockr/bench`, `wire: responses`).
 * Interleaved and repeated like the chat matrix.
 */
import { cpuMicros } from './proc-stats.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, closedLoad, counted, type Forwarded } from './scenarios.ts'
import { type LoadResult, responsesTarget } from './workload.ts'

export const RESPONSES_CONCURRENCY = 16

export interface ResponsesCell {
  runs: LoadResult[]
  /** Gateway CPU µs per request (empty for the direct runs). */
  cpuUs: number[]
}

export type ResponsesResult = Record<'direct' | 'translated' | 'passthrough', ResponsesCell>

export async function runResponses(ctx: Ctx, fwd: Forwarded): Promise<ResponsesResult> {
  const { gw, mocks, plan } = ctx
  const c = RESPONSES_CONCURRENCY
  const targets = {
    direct: responsesTarget(mocks.fast.url, 'bench', true),
    translated: responsesTarget(gw.url, 'mock/bench', true, gw.key),
    passthrough: responsesTarget(gw.url, 'mockr/bench', true, gw.key),
  }
  const out: ResponsesResult = {
    direct: { runs: [], cpuUs: [] },
    translated: { runs: [], cpuUs: [] },
    passthrough: { runs: [], cpuUs: [] },
  }
  for (let rep = 0; rep < plan.repeats; rep++) {
    for (const [name, t] of Object.entries(targets) as Array<
      [keyof ResponsesResult, (typeof targets)['direct']]
    >) {
      const measure = async () => {
        if (plan.warmS > 0) await closedLoad(ctx, t, c, plan.warmS)
        const cpu0 = cpuMicros(gw.pid)
        const r = await closedLoad(ctx, t, c, plan.closedS)
        if (name !== 'direct') out[name].cpuUs.push((cpuMicros(gw.pid) - cpu0) / Math.max(1, r.requests))
        return r
      }
      const r = name === 'direct' ? await measure() : await counted(ctx, fwd, !ctx.wrk, measure)
      out[name].runs.push(r)
      ctx.log(
        `  responses ${name} c${c} #${rep + 1}: ${Math.round(r.rps)} req/s p99 ${r.p99Ms.toFixed(2)} ms`,
      )
    }
  }
  return out
}

const WHAT: Record<keyof ResponsesResult, string> = {
  direct: 'mock /v1/responses direct',
  translated: 'gateway /v1/responses → chat upstream (translated)',
  passthrough: 'gateway /v1/responses → Responses upstream (pass-through)',
}

export function responsesRows(result: ResponsesResult): Row[] {
  const rows: Row[] = []
  const direct = series(result.direct.runs.map((r) => r.rps))
  for (const [name, cell] of Object.entries(result) as Array<[keyof ResponsesResult, ResponsesCell]>) {
    const what = `${WHAT[name]}, stream, c${RESPONSES_CONCURRENCY}`
    const rps = series(cell.runs.map((r) => r.rps))
    const vsDirect = name === 'direct' ? '' : ` (${fmt(rps.median / direct.median, 3)} × direct)`
    rows.push(
      row(`responses throughput, ${what}`, `${fmtSeries(rps, 0, 'req/s')}${vsDirect}`, rps.median, null),
    )
    const p50 = series(cell.runs.map((r) => r.p50Ms))
    const p99 = series(cell.runs.map((r) => r.p99Ms))
    rows.push(
      row(
        `responses latency p50 / p99, ${what}`,
        `${fmtSeries(p50, 2, 'ms')} / ${fmtSeries(p99, 2, 'ms')}`,
        0,
        null,
      ),
    )
    if (cell.cpuUs.length) {
      const cpu = series(cell.cpuUs)
      rows.push(row(`responses gateway CPU per request, ${what}`, fmtSeries(cpu, 0, 'µs'), cpu.median, null))
    }
    const errors = cell.runs.reduce((a, r) => a + r.errors, 0)
    if (errors)
      rows.push(row(`responses errors, ${what}`, fmt(errors), errors, { op: '==', value: 0, text: '0' }))
  }
  return rows
}
