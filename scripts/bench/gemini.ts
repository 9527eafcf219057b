/**
 * @module
 * The Gemini surface under closed-loop load, streaming, at one concurrency, beside chat: chat
 * completions to the OpenAI mock through the gateway (`mock/bench`, a pass-through: the baseline),
 * the Responses surface translated to it (the other surface's translation), the same upstream
 * reached from the Gemini surface (translated), the Gemini mock directly, and the
 * Gemini surface passing through to it (`gem/bench`). Interleaved and repeated like the chat matrix.
 */
import { cpuMicros } from './proc-stats.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, closedLoad, counted, type Forwarded } from './scenarios.ts'
import { chatTarget, geminiTarget, type LoadResult, responsesTarget } from './workload.ts'

export const GEMINI_CONCURRENCY = 16

export interface GeminiCell {
  runs: LoadResult[]
  /** Gateway CPU µs per request (empty for the direct runs). */
  cpuUs: number[]
}

export type GeminiResult = Record<'chat' | 'responses' | 'translated' | 'direct' | 'passthrough', GeminiCell>

export async function runGeminiSurface(ctx: Ctx, fwd: Forwarded): Promise<GeminiResult> {
  const { gw, mocks, plan } = ctx
  const c = GEMINI_CONCURRENCY
  const targets = {
    chat: chatTarget(gw.url, 'mock/bench', true, gw.key),
    responses: responsesTarget(gw.url, 'mock/bench', true, gw.key),
    translated: geminiTarget(gw.url, 'mock/bench', gw.key),
    direct: geminiTarget(mocks.gemini.url, 'bench'),
    passthrough: geminiTarget(gw.url, 'gem/bench', gw.key),
  }
  const cell = (): GeminiCell => ({ runs: [], cpuUs: [] })
  const out: GeminiResult = {
    chat: cell(),
    responses: cell(),
    translated: cell(),
    direct: cell(),
    passthrough: cell(),
  }
  for (let rep = 0; rep < plan.repeats; rep++) {
    for (const [name, t] of Object.entries(targets) as Array<
      [keyof GeminiResult, (typeof targets)['chat']]
    >) {
      const measure = async () => {
        if (plan.warmS > 0) await closedLoad(ctx, t, c, plan.warmS)
        const cpu0 = cpuMicros(gw.pid)
        const r = await closedLoad(ctx, t, c, plan.closedS)
        if (name !== 'direct') out[name].cpuUs.push((cpuMicros(gw.pid) - cpu0) / Math.max(1, r.requests))
        return r
      }
      // Only the OpenAI mock's requests are counted against admissions (as the messages row does).
      const upstreamIsOpenAI = name !== 'direct' && name !== 'passthrough'
      const r = upstreamIsOpenAI ? await counted(ctx, fwd, !ctx.wrk, measure) : await measure()
      out[name].runs.push(r)
      ctx.log(`  gemini ${name} c${c} #${rep + 1}: ${Math.round(r.rps)} req/s p99 ${r.p99Ms.toFixed(2)} ms`)
    }
  }
  return out
}

const WHAT: Record<keyof GeminiResult, string> = {
  chat: 'gateway /v1/chat/completions → chat upstream (pass-through, the baseline)',
  responses: 'gateway /v1/responses → chat upstream (translated, another surface)',
  translated: 'gateway Gemini surface → chat upstream (translated)',
  direct: 'Gemini mock :streamGenerateContent direct',
  passthrough: 'gateway Gemini surface → Gemini upstream (pass-through)',
}

export function geminiRows(result: GeminiResult): Row[] {
  const rows: Row[] = []
  const chat = series(result.chat.runs.map((r) => r.rps))
  const direct = series(result.direct.runs.map((r) => r.rps))
  for (const [name, cell] of Object.entries(result) as Array<[keyof GeminiResult, GeminiCell]>) {
    const what = `${WHAT[name]}, stream, c${GEMINI_CONCURRENCY}`
    const rps = series(cell.runs.map((r) => r.rps))
    const vs =
      name === 'translated' || name === 'responses'
        ? ` (${fmt(rps.median / chat.median, 3)} × chat)`
        : name === 'passthrough'
          ? ` (${fmt(rps.median / direct.median, 3)} × direct)`
          : ''
    rows.push(row(`gemini throughput, ${what}`, `${fmtSeries(rps, 0, 'req/s')}${vs}`, rps.median, null))
    const p50 = series(cell.runs.map((r) => r.p50Ms))
    const p99 = series(cell.runs.map((r) => r.p99Ms))
    rows.push(
      row(
        `gemini latency p50 / p99, ${what}`,
        `${fmtSeries(p50, 2, 'ms')} / ${fmtSeries(p99, 2, 'ms')}`,
        0,
        null,
      ),
    )
    if (cell.cpuUs.length) {
      const cpu = series(cell.cpuUs)
      rows.push(row(`gemini gateway CPU per request, ${what}`, fmtSeries(cpu, 0, 'µs'), cpu.median, null))
    }
    const errors = cell.runs.reduce((a, r) => a + r.errors, 0)
    if (errors)
      rows.push(row(`gemini errors, ${what}`, fmt(errors), errors, { op: '==', value: 0, text: '0' }))
  }
  return rows
}
