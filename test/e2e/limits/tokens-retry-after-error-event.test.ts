/**
 * A JSON answer under a token limit is streamed and gated (DESIGN §11); the gate counts into the
 * request's allowance, one for every attempt. An attempt that fails after its text was counted
 * (503 `upstream_overloaded` from the provider's `error` event, retried) reached the client with
 * nothing: its count is given back when it fails (DESIGN §10, failed attempts are never billed),
 * or the retry starts with that count spent, is cut short, and the cut settles to text the client
 * never got. Here the failed attempt's text alone nearly fills the allowance; the retry's answer
 * fits it whole. The client gets the retry's whole answer, and usage and budget bill the retry's
 * tokens (its input as the upstream reported it, its output) only. Three ways an attempt fails so:
 * - Anthropic, translated: the text and the error event in one read;
 * - the same in two writes with a pause between (most often two reads: the text is gated and
 *   counted before the error arrives);
 * - chat → openai pass-through: its gate counts every event before the assembly finds the error.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { meteredPlan } from '../../support/config-doc.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

// The request's allowance: its max_tokens (one choice).
const MAX_TOKENS = 110
// 80 words of text in the failed attempt (81 tokens on o200k, 108 on Claude's bound with the
// carried space: within MAX_TOKENS, since a chunk that would pass it is never relayed, and the
// error event must come after the text); 30 one-token words the retry answers (< MAX_TOKENS, but
// the failed text's count + 30 > MAX_TOKENS).
const FAILED_TEXT = 'lorem '.repeat(80)
const FAILED_PIECES = FAILED_TEXT.match(/.{1,60}/g)!
const WORDS = Array.from({ length: 30 }, () => 'yes ')
const ANSWER = WORDS.join('')
const INPUT = 7
const OUTPUT = 30

// Anthropic's Messages stream.
const sse = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const head = (id: string, model: string) =>
  sse('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      usage: { input_tokens: INPUT, output_tokens: 1 },
    },
  }) + sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })
const delta = (text: string) => sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })
const overloaded = sse('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })
const answered = (model: string) =>
  head('msg_2', model) +
  WORDS.map(delta).join('') +
  sse('content_block_stop', { index: 0 }) +
  sse('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: OUTPUT } }) +
  sse('message_stop', {})

// OpenAI's chat completion chunks.
const chunk = (id: string, choice: Record<string, unknown> | null, usage?: Record<string, number>) =>
  `data: ${JSON.stringify({
    id,
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-a',
    choices: choice ? [{ index: 0, finish_reason: null, ...choice }] : [],
    ...(usage ? { usage } : {}),
  })}\n\n`
const openaiFailed =
  chunk('c1', { delta: { role: 'assistant', content: '' } }) +
  FAILED_PIECES.map((t) => chunk('c1', { delta: { content: t } })).join('') +
  `data: ${JSON.stringify({ error: { message: 'The server is overloaded', type: 'server_error', code: 'server_error' } })}\n\n`
const openaiAnswered =
  chunk('c2', { delta: { role: 'assistant', content: '' } }) +
  WORDS.map((t) => chunk('c2', { delta: { content: t } })).join('') +
  chunk('c2', { delta: {}, finish_reason: 'stop' }) +
  chunk('c2', null, { prompt_tokens: INPUT, completion_tokens: OUTPUT, total_tokens: INPUT + OUTPUT }) +
  'data: [DONE]\n\n'

/** Upstream calls per model. */
const calls = new Map<string, number>()
let upstream: ReturnType<typeof Bun.serve>
let gw: TestGateway
beforeAll(async () => {
  upstream = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const { model } = (await req.json()) as { model: string }
      const n = (calls.get(model) ?? 0) + 1
      calls.set(model, n)
      const headers = { 'content-type': 'text/event-stream' }
      if (model === 'gpt-a') return new Response(n === 1 ? openaiFailed : openaiAnswered, { headers })
      if (n > 1) return new Response(answered(model), { headers })
      const failedText = head('msg_1', model) + FAILED_PIECES.map(delta).join('')
      // claude-a: one write, read at once — its text and its end.
      if (model === 'claude-a') return new Response(failedText + overloaded, { headers })
      // claude-b: the text, a pause (the gateway reads and gates it), then the error event.
      const enc = new TextEncoder()
      const body = new ReadableStream<Uint8Array>({
        async start(c) {
          c.enqueue(enc.encode(failedText))
          await Bun.sleep(100)
          c.enqueue(enc.encode(overloaded))
          c.close()
        },
      })
      return new Response(body, { headers })
    },
  })
  const base = `http://127.0.0.1:${upstream.port}/v1`
  const retry = { attempts: 1, backoff_ms: 10, max_backoff_ms: 10 }
  // A token in costs 1 micro-dollar, a token out 10.
  const model = (name: string) => ({
    name,
    context_window: 100_000,
    max_output_tokens: 4_096,
    features: ['streaming', 'system_messages'],
    pricing: { input: 1, output: 10 },
  })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      usage: { flush_ms: 10 },
      providers: [
        {
          prefix: 'anth',
          kind: 'anthropic',
          base_url: base,
          api_key: 'sk-ant-x',
          retry,
          models: [model('claude-a'), model('claude-b')],
        },
        { prefix: 'oai', kind: 'openai', base_url: base, api_key: 'sk-x', retry, models: [model('gpt-a')] },
      ],
      plans: {
        metered: meteredPlan(),
      },
      default_plan: 'metered',
    },
  })
}, 15_000)
afterAll(async () => {
  await gw?.stop()
  upstream?.stop(true)
})

/** One JSON request for `model` on a key of its own: the retry's answer whole, and only its tokens billed. */
async function retriedWhole(model: string, upstreamModel: string): Promise<void> {
  const { key } = await gw.key(`retried-${upstreamModel}`, 'metered')
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: MAX_TOKENS }),
  })
  const body = (await res.json()) as any
  expect(res.status).toBe(200)
  expect(calls.get(upstreamModel)).toBe(2)
  expect(body.choices[0].message.content).toBe(ANSWER)
  expect(body.choices[0].finish_reason).toBe('stop')
  expect(body.usage).toMatchObject({ prompt_tokens: INPUT, completion_tokens: OUTPUT })
  let u: any
  for (let i = 0; i < 50; i++) {
    await gw.deps.recorder.flush()
    u = await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()
    if (u.usage.today.requests > 0) break
    await Bun.sleep(20)
  }
  expect(u.usage.today.prompt_tokens).toBe(INPUT)
  expect(u.usage.today.completion_tokens).toBe(OUTPUT)
  expect(Math.round(u.budget.spent_usd * 1e6)).toBe(INPUT + 10 * OUTPUT)
}

test("a failed attempt's text is not counted: the retry's answer comes whole, and only its tokens are billed", async () => {
  await retriedWhole('anth/claude-a', 'claude-a')
}, 15_000)

test('the same when the text and the error event come in two reads: the text counted is given back', async () => {
  await retriedWhole('anth/claude-b', 'claude-b')
}, 15_000)

test('chat → openai pass-through: the failed attempt its gate counted is given back, and its retry comes whole', async () => {
  await retriedWhole('oai/gpt-a', 'gpt-a')
}, 15_000)
