/**
 * @module
 * Chat → openai: the translating route (parse, `applyDefaults`, stringify up; decode and re-encode
 * down) against the pass-through (`chatSurface.forward`), measured in one process, interleaved so
 * that load on the machine falls on both alike.
 *
 * - `steps`: the per-request JS work without sockets — the request body built, the answer turned
 *   into the client's bytes (non-stream), a 20-delta stream through the one-stage writer.
 * - `e2e`: whole requests through the real server and the mock upstream (same process), CPU time
 *   of the process per request (the mock's and the client's share is the same in both columns).
 *
 * `bun scripts/bench/chat-forward.ts [iterations]`
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildDeps } from '../../src/app/build.ts'
import { startServer } from '../../src/app/serve.ts'
import { parseConfig } from '../../src/config/index.ts'
import { upstreamModelName } from '../../src/config/models.ts'
import { parseJsonObject } from '../../src/json/parse-json-body.ts'
import { writeStream } from '../../src/pipeline/stream/writer.ts'
import type { EncodeContext } from '../../src/pipeline/surface.ts'
import { asCompletion } from '../../src/providers/openai/index.ts'
import { OpenAIChunkDecoder } from '../../src/providers/openai/stream.ts'
import { upstreamPlan } from '../../src/providers/stream-plan.ts'
import type { CallContext } from '../../src/providers/types.ts'
import { forwardBody } from '../../src/surfaces/chat/forward-request.ts'
import { chatSurface } from '../../src/surfaces/chat/index.ts'
import { ChatChunkEncoder } from '../../src/surfaces/chat/stream-encoder.ts'
import { CHAT_EXAMPLE, validateChatRequest } from '../../src/surfaces/chat/validate.ts'
import { applyDefaults } from '../../src/surfaces/shared/chat-defaults.ts'
import { silentLogger } from '../../src/util/log.ts'
import { buildCompletion, buildStreamFrames } from '../mock-upstream/wire.ts'
import { startMockUpstream } from '../mock-upstream.ts'

const N = Number(process.argv[2] ?? 4000)
const model = { name: 'bench', context_window: 128_000, max_output_tokens: 4096, features: ['streaming'] }
const provider = {
  prefix: 'mock',
  kind: 'openai' as const,
  base_url: 'http://127.0.0.1:1',
  api_key: 'k',
  models: [],
}
const ctx = {
  provider,
  model,
  signal: new AbortController().signal,
  requestId: 'b',
  timeouts: { firstByteMs: 60_000, idleMs: 60_000, totalMs: 600_000 },
} as unknown as CallContext

const small = JSON.stringify({ model: 'mock/bench', messages: [{ role: 'user', content: 'Hello there' }] })
const large = JSON.stringify({
  model: 'mock/bench',
  messages: Array.from({ length: 40 }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `Turn ${i}: ${'lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(4)}`,
  })),
  temperature: 0.3,
})
const shape = { model: 'bench', created: 0, words: 20, usage: true, tools: [] as string[] }
const completion = buildCompletion(shape)
const streamBytes = Buffer.concat(buildStreamFrames(shape))
const of = (b: Uint8Array) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(b)
      c.close()
    },
  })

const opts = { keepaliveMs: 10_000, holdMs: 5_000, onFinish: () => {} }
const streamView = validateChatRequest(
  parseJsonObject(JSON.stringify({ ...JSON.parse(small), stream: true }), CHAT_EXAMPLE),
)
const encodeCtx = {
  modelId: 'mock/bench',
  provider,
  view: streamView,
  includeUsage: false,
} as unknown as EncodeContext<typeof streamView>
const fwd = chatSurface.forward!

/** What each route does per request beyond parsing and validating the body (which both do). */
const steps = {
  requestOld: (text: string) => {
    const view = validateChatRequest(parseJsonObject(text, CHAT_EXAMPLE))
    const req = applyDefaults(view, model as never, upstreamModelName(model as never))
    return JSON.stringify({ ...req, stream: undefined, stream_options: undefined })
  },
  requestNew: (text: string) => {
    const view = validateChatRequest(parseJsonObject(text, CHAT_EXAMPLE))
    return forwardBody(view, text, model as never, 'max_completion_tokens')
  },
  answerOld: async () => {
    const json = JSON.parse(await new Response(completion).text())
    const c = asCompletion(json, 'mock')
    c.model = 'mock/bench'
    return JSON.stringify(c)
  },
  answerNew: async () => fwd.relayJson(completion, encodeCtx).body,
  streamOld: async () => {
    // As the adapter's stream(): the upstream Response, its content type checked, then the plan.
    const res = new Response(of(streamBytes), { headers: { 'content-type': 'text/event-stream' } })
    if ((res.headers.get('content-type') ?? '').includes('application/json')) throw new Error('json')
    const out = await writeStream(
      upstreamPlan(res.body!, ctx, new OpenAIChunkDecoder('mock')),
      new ChatChunkEncoder('mock/bench', false),
      opts,
    )
    if (out.status !== 'ok') throw out.error
    return new Response(out.body).text()
  },
  streamNew: async () => {
    const { plan, encoder } = await fwd.relay(
      new Response(of(streamBytes), { headers: { 'content-type': 'text/event-stream' } }),
      ctx,
      encodeCtx,
      false,
    )
    const out = await writeStream(plan, encoder, opts)
    if (out.status !== 'ok') throw out.error
    return new Response(out.body).text()
  },
}

async function perOp(n: number, op: () => unknown): Promise<number> {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await op()
  return ((performance.now() - t0) * 1000) / n
}

async function interleaved(ops: Record<string, () => unknown>, n: number, rounds = 10) {
  for (const op of Object.values(ops)) for (let i = 0; i < 300; i++) await op()
  const total: Record<string, number> = {}
  for (let r = 0; r < rounds; r++)
    for (const [name, op] of Object.entries(ops))
      total[name] = (total[name] ?? 0) + (await perOp(n / rounds, op))
  return Object.fromEntries(Object.entries(total).map(([k, v]) => [k, +(v / rounds).toFixed(2)]))
}

const only = process.argv[3]
if (only !== 'e2e') console.log('steps (µs per op, wall time in one process):')
if (only !== 'e2e')
  console.log(
    await interleaved(
      {
        requestOld_small: () => steps.requestOld(small),
        requestNew_small: () => steps.requestNew(small),
        requestOld_large: () => steps.requestOld(large),
        requestNew_large: () => steps.requestNew(large),
        answerOld: steps.answerOld,
        answerNew: steps.answerNew,
        streamOld: steps.streamOld,
        streamNew: steps.streamNew,
      },
      N,
    ),
  )

// Whole requests: the real server and the mock upstream in this process; CPU per request.
const dbDir = mkdtempSync(join(tmpdir(), 'chat-forward-bench-'))
const mock = await startMockUpstream({ chunks: 20 })
const config = parseConfig(
  {
    server: { host: '127.0.0.1', port: 0 },
    database: { path: join(dbDir, 'bench.db') },
    providers: [{ prefix: 'mock', kind: 'openai', base_url: mock.url, api_key: 'x', models: [model] }],
    plans: { free: { rpm: null, rpd: null, models: ['*'] } },
    default_plan: 'free',
  },
  'bench',
)
const deps = buildDeps(config, { log: silentLogger })
const running = startServer(config, deps)
await deps.accounts.createAccount('bench', 'free')
const { key } = await deps.accounts.createKey('bench', 'bench')
const post = (body: string) =>
  fetch(`${running.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  }).then((r) => r.text())
const streamBody = JSON.stringify({ ...JSON.parse(small), stream: true })
const surface = chatSurface as { forward?: typeof fwd }

async function cpuPerRequest(body: string, forward: boolean, n: number): Promise<number> {
  surface.forward = forward ? fwd : undefined
  const c0 = process.cpuUsage()
  for (let i = 0; i < n; i++) await post(body)
  const c = process.cpuUsage(c0)
  return (c.user + c.system) / n
}

const e2e: Record<string, number> = {}
const M = Math.max(200, Math.floor(N / 4))
for (const forward of [false, true]) for (const b of [small, streamBody]) await cpuPerRequest(b, forward, 200)
const rounds = 8
for (let r = 0; r < rounds; r++) {
  for (const [name, body] of [
    ['nonStream', small],
    ['nonStreamLarge', large],
    ['stream', streamBody],
  ] as const) {
    for (const forward of [false, true]) {
      const k = `${name}_${forward ? 'forward' : 'translate'}`
      e2e[k] = (e2e[k] ?? 0) + (await cpuPerRequest(body, forward, M / rounds)) / rounds
    }
  }
}
surface.forward = fwd
console.log('e2e (process CPU µs per request: gateway + mock + client, sequential):')
console.log(Object.fromEntries(Object.entries(e2e).map(([k, v]) => [k, Math.round(v)])))
await running.stop()
await mock.stop()
rmSync(dbDir, { recursive: true, force: true })
