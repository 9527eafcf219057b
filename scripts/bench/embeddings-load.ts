/**
 * @module
 * `POST /v1/embeddings` under closed-loop load (eight inputs per request, 1536-value vectors,
 * base64 as the `openai` SDK asks): the mock's own `/v1/embeddings` (the baseline), the gateway
 * passing through to it (`mock/embed`), and the gateway's demo vectors (`demo/embed`, no upstream:
 * the operation's own cost). Interleaved and repeated like the chat matrix.
 */
import { cpuMicros } from './proc-stats.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, closedLoad, counted, type Forwarded } from './scenarios.ts'
import { embeddingsTarget, type LoadResult } from './workload.ts'

export const EMBEDDINGS_CONCURRENCY = 16

export interface EmbeddingsCell {
  runs: LoadResult[]
  /** Gateway CPU µs per request (empty for the direct runs). */
  cpuUs: number[]
}

export type EmbeddingsResult = Record<'direct' | 'passthrough' | 'demo', EmbeddingsCell>

export async function runEmbeddings(ctx: Ctx, fwd: Forwarded): Promise<EmbeddingsResult> {
  const { gw, mocks, plan } = ctx
  const c = EMBEDDINGS_CONCURRENCY
  const targets = {
    direct: embeddingsTarget(mocks.fast.url, 'text-embedding-3-small'),
    passthrough: embeddingsTarget(gw.url, 'mock/embed', gw.key),
    demo: embeddingsTarget(gw.url, 'demo/embed', gw.key),
  }
  const out: EmbeddingsResult = {
    direct: { runs: [], cpuUs: [] },
    passthrough: { runs: [], cpuUs: [] },
    demo: { runs: [], cpuUs: [] },
  }
  for (let rep = 0; rep < plan.repeats; rep++) {
    for (const [name, t] of Object.entries(targets) as Array<
      [keyof EmbeddingsResult, (typeof targets)['direct']]
    >) {
      const measure = async () => {
        if (plan.warmS > 0) await closedLoad(ctx, t, c, plan.warmS)
        const cpu0 = cpuMicros(gw.pid)
        const r = await closedLoad(ctx, t, c, plan.closedS)
        if (name !== 'direct') out[name].cpuUs.push((cpuMicros(gw.pid) - cpu0) / Math.max(1, r.requests))
        return r
      }
      // Only the pass-through reaches the mock: its admissions are checked against the mock's count.
      const r = name === 'passthrough' ? await counted(ctx, fwd, !ctx.wrk, measure) : await measure()
      out[name].runs.push(r)
      ctx.log(
        `  embeddings ${name} c${c} #${rep + 1}: ${Math.round(r.rps)} req/s p99 ${r.p99Ms.toFixed(2)} ms`,
      )
    }
  }
  return out
}

const WHAT: Record<keyof EmbeddingsResult, string> = {
  direct: 'mock /v1/embeddings direct',
  passthrough: 'gateway /v1/embeddings → openai upstream (pass-through)',
  demo: 'gateway /v1/embeddings, demo vectors (no upstream)',
}

export function embeddingsRows(result: EmbeddingsResult): Row[] {
  const rows: Row[] = []
  const direct = series(result.direct.runs.map((r) => r.rps))
  for (const [name, cell] of Object.entries(result) as Array<[keyof EmbeddingsResult, EmbeddingsCell]>) {
    const what = `${WHAT[name]}, 8 inputs × 1536 base64, c${EMBEDDINGS_CONCURRENCY}`
    const rps = series(cell.runs.map((r) => r.rps))
    const vsDirect = name === 'passthrough' ? ` (${fmt(rps.median / direct.median, 3)} × direct)` : ''
    rows.push(
      row(`embeddings throughput, ${what}`, `${fmtSeries(rps, 0, 'req/s')}${vsDirect}`, rps.median, null),
    )
    const p50 = series(cell.runs.map((r) => r.p50Ms))
    const p99 = series(cell.runs.map((r) => r.p99Ms))
    rows.push(
      row(
        `embeddings latency p50 / p99, ${what}`,
        `${fmtSeries(p50, 2, 'ms')} / ${fmtSeries(p99, 2, 'ms')}`,
        0,
        null,
      ),
    )
    if (cell.cpuUs.length) {
      const cpu = series(cell.cpuUs)
      rows.push(row(`embeddings gateway CPU per request, ${what}`, fmtSeries(cpu, 0, 'µs'), cpu.median, null))
    }
    const errors = cell.runs.reduce((a, r) => a + r.errors, 0)
    if (errors)
      rows.push(row(`embeddings errors, ${what}`, fmt(errors), errors, { op: '==', value: 0, text: '0' }))
  }
  return rows
}
