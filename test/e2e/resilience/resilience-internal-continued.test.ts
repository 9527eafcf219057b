/**
 * The gateway's own fault after content reached the client (failure kind `internal`, DESIGN §10
 * and the failure table): the stream's translation throws on an Anthropic `content_block_start`
 * with a null block, after the text `fine` was relayed. A continuation follows the table as a
 * failover before content does: never on a fallback of the same provider kind (its stream goes
 * through the same code and would fail the same way), only on one of another kind. Real gateway,
 * a real Anthropic-wire upstream and a real OpenAI-wire one that bills per word.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

let gw: TestGateway
let ant: ReturnType<typeof Bun.serve>
let oa: BillingUpstream
/** The Anthropic upstream's requests: model, and the trailing assistant text (a prefill) if any. */
const antSeen: Array<{ model: string; prefill: string | null }> = []

const START = {
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'm',
    content: [],
    stop_reason: null,
    usage: { input_tokens: 3, output_tokens: 0 },
  },
}
const TEXT = [
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'fine' } },
]
const END = [
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } },
  { type: 'message_stop' },
]
/** Text relayed, then a null block: the translation throws after content. */
const ODD = [
  START,
  ...TEXT,
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_start', index: 1, content_block: null },
]

beforeAll(async () => {
  ant = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as {
        model: string
        messages: Array<{ role: string; content: unknown }>
      }
      const last = body.messages.at(-1)!
      antSeen.push({
        model: body.model,
        prefill: last.role === 'assistant' ? JSON.stringify(last.content) : null,
      })
      const events = body.model === 'odd' ? ODD : [START, ...TEXT, ...END]
      const sse = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')
      return new Response(sse, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  oa = await startBillingUpstream({ answerTokens: 5 })
  const model = (name: string, fallbacks: string[] = []) => ({
    name,
    context_window: 128_000,
    max_output_tokens: 1000,
    features: ['streaming', 'system_messages', 'prefill'],
    fallbacks,
  })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'ant',
          kind: 'anthropic',
          base_url: `http://127.0.0.1:${ant.port}`,
          api_key: 'sk-ant-upstream',
          retry: { attempts: 0, backoff_ms: 1, max_backoff_ms: 1 },
          models: [
            { ...model('odd', ['ant/p']), upstream_name: 'odd' },
            { ...model('odd2', ['ant/p', 'oa/p']), upstream_name: 'odd' },
            model('p'),
          ],
        },
        {
          prefix: 'oa',
          kind: 'openai',
          base_url: oa.url,
          api_key: 'sk-oa-upstream',
          models: [model('p')],
        },
      ],
      plans: { open: { rpm: null, rpd: null, models: ['*'] } },
      default_plan: 'open',
    },
  })
}, 30_000)

afterAll(async () => {
  await gw?.stop()
  ant?.stop(true)
  await oa?.stop()
})

const stream = (key: string, model: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], stream: true }),
  })

test('internal after content, the only prefill fallback of the same kind: no continuation, the error in-band', async () => {
  const { key } = await gw.key('same-kind')
  const from = antSeen.length
  const res = await stream(key, 'ant/odd')
  const text = await res.text()
  expect(res.status, text).toBe(200)
  expect(text).toContain('fine')
  expect(text).toContain('internal_error')
  expect(text).not.toContain('[DONE]')
  // One upstream call: the odd model's. The same-kind fallback was not asked to continue.
  expect(antSeen.slice(from).map((s) => s.model)).toEqual(['odd'])
})

test('internal after content with a prefill fallback of another kind: continued there, past the same-kind one', async () => {
  const { key } = await gw.key('other-kind')
  const from = antSeen.length
  const oaFrom = oa.seen.length
  const res = await stream(key, 'ant/odd2')
  const text = await res.text()
  expect(res.status, text).toBe(200)
  expect(text).toContain('fine')
  expect(text).not.toContain('internal_error')
  expect(text).toContain('[DONE]')
  expect(antSeen.slice(from).map((s) => s.model)).toEqual(['odd'])
  expect(oa.seen.slice(oaFrom)).toEqual([{ model: 'p', prefill: 'fine' }])
})
