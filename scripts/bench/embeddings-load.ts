/**
 * @module
 * `POST /v1/embeddings` under closed-loop load (eight inputs per request, 1536-value vectors):
 * the mock's own `/v1/embeddings` (the baseline), the gateway passing through to it
 * (`mock/embed`), and the gateway's demo vectors (`demo/embed`, no upstream: the operation's own
 * cost); in base64 (the `openai` SDK's default) and float (the API's, the AI SDK's), whose answers
 * are four times larger and cost a JSON parse (pass-through) or a formatting (demo) of every
 * number. Interleaved and repeated like the chat matrix.
 */
import { cpuMicros } from './proc-stats.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, closedLoad, counted, type Forwarded } from './scenarios.ts'
import { embeddingsTarget, type LoadResult, type Target } from './workload.ts'

export const EMBEDDINGS_CONCURRENCY = 16

export interface EmbeddingsCell {
  runs: LoadResult[]
  /** Gateway CPU µs per request (empty for the direct runs). */
  cpuUs: number[]
}

type Route = 'direct' | 'passthrough' | 'demo'
type Format = 'base64' | 'float'
export type EmbeddingsResult = Record<`${Format}/${Route}`, EmbeddingsCell>

export async function runEmbeddings(ctx: Ctx, fwd: Forwarded): Promise<EmbeddingsResult> {
  const { gw, mocks, plan } = ctx
  const c = EMBEDDINGS_CONCURRENCY
  const targets = {} as Record<keyof EmbeddingsResult, Target>
  const out = {} as EmbeddingsResult
  for (const f of ['base64', 'float'] as const) {
    targets[`${f}/direct`] = embeddingsTarget(mocks.fast.url, 'text-embedding-3-small', f)
    targets[`${f}/passthrough`] = embeddingsTarget(gw.url, 'mock/embed', f, gw.key)
    targets[`${f}/demo`] = embeddingsTarget(gw.url, 'demo/embed', f, gw.key)
  }
  const names = Object.keys(targets) as Array<keyof EmbeddingsResult>
  for (const name of names) out[name] = { runs: [], cpuUs: [] }
  for (let rep = 0; rep < plan.repeats; rep++) {
    for (const name of names) {
      const route = name.split('/')[1] as Route
      const t = targets[name]
      const measure = async () => {
        if (plan.warmS > 0) await closedLoad(ctx, t, c, plan.warmS)
        const cpu0 = cpuMicros(gw.pid)
        const r = await closedLoad(ctx, t, c, plan.closedS)
        if (route !== 'direct') out[name].cpuUs.push((cpuMicros(gw.pid) - cpu0) / Math.max(1, r.requests))
        return r
      }
      // Only the pass-through reaches the mock: its admissions are checked against the mock's count.
      const r = route === 'passthrough' ? await counted(ctx, fwd, !ctx.wrk, measure) : await measure()
      out[name].runs.push(r)
      ctx.log(
        `  embeddings ${name} c${c} #${rep + 1}: ${Math.round(r.rps)} req/s p99 ${r.p99Ms.toFixed(2)} ms`,
      )
    }
  }
  return out
}

const WHAT: Record<Route, string> = {
  direct: 'mock /v1/embeddings direct',
  passthrough: 'gateway /v1/embeddings → openai upstream (pass-through)',
  demo: 'gateway /v1/embeddings, demo vectors (no upstream)',
}

export function embeddingsRows(result: EmbeddingsResult): Row[] {
  const rows: Row[] = []
  for (const [name, cell] of Object.entries(result) as Array<[keyof EmbeddingsResult, EmbeddingsCell]>) {
    const [format, route] = name.split('/') as [Format, Route]
    const direct = series(result[`${format}/direct`].runs.map((r) => r.rps))
    const what = `${WHAT[route]}, 8 inputs × 1536 ${format}, c${EMBEDDINGS_CONCURRENCY}`
    const rps = series(cell.runs.map((r) => r.rps))
    const vsDirect = route === 'passthrough' ? ` (${fmt(rps.median / direct.median, 3)} × direct)` : ''
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
