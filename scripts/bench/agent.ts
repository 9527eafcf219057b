/**
 * @module
 * An agent-like workload on the input count (DESIGN §11 "Counting must not cost the hot path"):
 * `AGENT_CONVERSATIONS` conversations at once, each `AGENT_TURNS` turns, each turn resending the
 * whole conversation plus about 5 KB of new text (a user message and the previous answer), so the
 * body grows to about 150 KB — what a coding agent sends. The same conversations (each round new
 * text, so no count is reused from an earlier round) through the priced mock route from a plain
 * key and from a metered one (TPM, TPD and a budget too large to refuse: every request counts its
 * input, reserves and settles), rounds alternating plain and metered. Measured: the gateway's CPU
 * per request of each, and `GET /healthz` latency sampled every 5 ms during each round (the event
 * loop's responsiveness while large new text is counted).
 */

import { cpuMicros } from './proc-stats.ts'
import { PRICED_MODEL } from './processes.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import type { Ctx } from './scenarios.ts'
import { meteredKey } from './tokens.ts'

export const AGENT_CONVERSATIONS = 4
export const AGENT_TURNS = 30
/** New text per turn, in bytes: 30 turns grow the body to about 150 KB. */
const TURN_BYTES = 5_000

type Route = 'plain' | 'metered'

export interface AgentResult {
  cpuUs: Record<Route, number[]>
  healthzP99Ms: Record<Route, number[]>
  /** The last turn's body, in bytes. */
  lastBodyBytes: number
}

/** English-like text: words of the vocabulary in a seeded order (every round new text). */
function textMaker(seed: number): (bytes: number) => string {
  const vocab = VOCABULARY.split(' ')
  let s = seed >>> 0
  return (bytes) => {
    const out: string[] = []
    let n = 0
    while (n < bytes) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0
      const w = vocab[s % vocab.length]!
      out.push(w)
      n += w.length + 1
      if (s % 13 === 0) out.push(`${s % 997}.\n`)
    }
    return out.join(' ')
  }
}

/** One conversation, turn by turn: each turn's whole body. */
function conversation(seed: number): string[] {
  const text = textMaker(seed)
  const messages: Array<{ role: string; content: string }> = [
    { role: 'system', content: `You are a coding agent. ${text(2_000)}` },
  ]
  const bodies: string[] = []
  for (let turn = 0; turn < AGENT_TURNS; turn++) {
    if (turn > 0) messages.push({ role: 'assistant', content: text(TURN_BYTES / 2) })
    messages.push({ role: 'user', content: text(TURN_BYTES / 2) })
    bodies.push(JSON.stringify({ model: `mock/${PRICED_MODEL}`, messages, max_tokens: 256 }))
  }
  return bodies
}

export async function runAgent(ctx: Ctx, rounds: number, binary: boolean): Promise<AgentResult> {
  const key: Record<Route, string> = {
    plain: ctx.gw.key,
    metered: await meteredKey(ctx.gw, ctx.dir, binary, 'bench-agent'),
  }
  const out: AgentResult = {
    cpuUs: { plain: [], metered: [] },
    healthzP99Ms: { plain: [], metered: [] },
    lastBodyBytes: 0,
  }
  let seed = 1
  const round = async (route: Route) => {
    const convs = Array.from({ length: AGENT_CONVERSATIONS }, () => conversation(seed++))
    out.lastBodyBytes = Buffer.byteLength(convs[0]!.at(-1)!)
    let running = true
    const probes: number[] = []
    const prober = (async () => {
      while (running) {
        const t0 = performance.now()
        await (await fetch(`${ctx.gw.url}/healthz`)).arrayBuffer()
        probes.push(performance.now() - t0)
        await Bun.sleep(5)
      }
    })()
    const cpu0 = cpuMicros(ctx.gw.pid)
    let requests = 0
    await Promise.all(
      convs.map(async (bodies) => {
        for (const body of bodies) {
          const r = await fetch(`${ctx.gw.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key[route]}`, 'content-type': 'application/json' },
            body,
          })
          await r.arrayBuffer()
          if (r.status !== 200) throw new Error(`agent row: ${route} answered ${r.status}`)
          requests++
        }
      }),
    )
    const cpu = (cpuMicros(ctx.gw.pid) - cpu0) / requests
    running = false
    await prober
    const sorted = probes.sort((a, b) => a - b)
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!
    out.cpuUs[route].push(cpu)
    out.healthzP99Ms[route].push(p99)
    ctx.log(
      `  agent ${route}: ${Math.round(cpu)} µs/req, /healthz p99 ${p99.toFixed(1)} ms (${probes.length} probes)`,
    )
  }
  // A warm-up pair (each route's code compiled, the tokenizer loaded), then the measured ones.
  await round('plain')
  await round('metered')
  out.cpuUs = { plain: [], metered: [] }
  out.healthzP99Ms = { plain: [], metered: [] }
  for (let i = 0; i < rounds; i++) {
    await round(i % 2 ? 'metered' : 'plain')
    await round(i % 2 ? 'plain' : 'metered')
  }
  return out
}

export function agentRows(r: AgentResult): Row[] {
  const plain = series(r.cpuUs.plain)
  const metered = series(r.cpuUs.metered)
  const hp = series(r.healthzP99Ms.plain)
  const hm = series(r.healthzP99Ms.metered)
  const what = `agent-like: ${AGENT_CONVERSATIONS} conversations × ${AGENT_TURNS} turns growing to ${fmt(r.lastBodyBytes / 1000)} KB`
  return [
    row(
      `gateway CPU per request, ${what}: metered key (input counted, reserve + settle) vs plain key`,
      `${fmtSeries(metered, 0, 'µs')} vs ${fmtSeries(plain, 0, 'µs')} (+${fmt(metered.median - plain.median, 0)} µs, ${fmt(metered.median / plain.median, 2)} ×)`,
      metered.median / plain.median,
      null,
    ),
    row(
      `GET /healthz p99 during it (probed every 5 ms): metered vs plain`,
      `${fmtSeries(hm, 1, 'ms')} vs ${fmtSeries(hp, 1, 'ms')}`,
      hm.median,
      null,
    ),
  ]
}

/** Words the agent's text is drawn from: the README's, a realistic spread of lengths and merges. */
const VOCABULARY =
  'a self-hosted OpenAI-compatible gateway that ships as one executable point any client at it and it routes each request to the provider named by the model id with keys accounts plans rate limits token budgets usage and a console it translates between chat completions messages and responses streams every event as it arrives retries fallbacks circuits and key pools keep answers flowing when a provider misbehaves the request log shows each call with its tokens cost and latency function const return await export import interface type string number boolean if else for while true false null undefined async promise error status headers body json parse stringify config yaml limits window minute day budget month reservation settle admission refused retry after seconds'
