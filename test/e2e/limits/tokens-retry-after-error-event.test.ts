/**
 * A JSON answer under a token limit is streamed and gated (DESIGN §11); the gate's count is the
 * request's, shared by every attempt. An attempt whose one read carries text and then the
 * provider's `error` event fails (503 `upstream_overloaded`, retried): the text it made must not be
 * counted, or the retry starts with that count spent, is cut short, and the cut settles to text
 * the client never got. Here the failed attempt's text alone nearly fills the allowance; the
 * retry's answer fits it whole. The client gets the retry's whole answer, and usage and budget
 * bill the retry's tokens (its input as the upstream reported it, its output) only.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

// The request's allowance: its max_tokens (one choice).
const MAX_TOKENS = 100
// ~80 tokens of text in the failed attempt; 30 one-token words the retry answers (< MAX_TOKENS,
// but 80 + 30 > MAX_TOKENS).
const FAILED_TEXT = 'lorem '.repeat(80)
const WORDS = Array.from({ length: 30 }, () => 'yes ')
const ANSWER = WORDS.join('')
const INPUT = 7
const OUTPUT = 30

const sse = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const head = (id: string) =>
  sse('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: 'claude-a',
      content: [],
      usage: { input_tokens: INPUT, output_tokens: 1 },
    },
  }) + sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })
const delta = (text: string) => sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })

let attempts = 0
let upstream: ReturnType<typeof Bun.serve>
let gw: TestGateway
beforeAll(async () => {
  upstream = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch() {
      attempts++
      // Each answer is one write: the gateway reads it, its text and its end, in one read.
      const body =
        attempts === 1
          ? head('msg_1') +
            FAILED_TEXT.match(/.{1,60}/g)!
              .map(delta)
              .join('') +
            sse('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })
          : head('msg_2') +
            WORDS.map(delta).join('') +
            sse('content_block_stop', { index: 0 }) +
            sse('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: OUTPUT } }) +
            sse('message_stop', {})
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    },
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
          base_url: `http://127.0.0.1:${upstream.port}/v1`,
          api_key: 'sk-ant-x',
          retry: { attempts: 1, backoff_ms: 10, max_backoff_ms: 10 },
          models: [
            {
              name: 'claude-a',
              context_window: 100_000,
              max_output_tokens: 4_096,
              features: ['streaming', 'system_messages'],
              // A token in costs 1 micro-dollar, a token out 10.
              pricing: { input: 1, output: 10 },
            },
          ],
        },
      ],
      plans: {
        metered: {
          rpm: null,
          rpd: null,
          tpm: 1_000_000,
          budget: { usd: 100, period: 'month' },
          models: ['*'],
        },
      },
      default_plan: 'metered',
    },
  })
}, 15_000)
afterAll(async () => {
  await gw?.stop()
  upstream?.stop(true)
})

test("a failed attempt's text is not counted: the retry's answer comes whole, and only its tokens are billed", async () => {
  const { key } = await gw.key('retried', 'metered')
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'anth/claude-a',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: MAX_TOKENS,
    }),
  })
  expect(res.status).toBe(200)
  const body = (await res.json()) as any
  expect(attempts).toBe(2)
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
}, 15_000)
