/**
 * Prompt caches through the gateway (DESIGN §14): `cache_control` reaches an anthropic upstream
 * as the client marked it — from Messages (pass-through) and from chat (OpenAI-format parts,
 * messages and tools carrying it, as LiteLLM and OpenRouter accept) — and the cache reads and
 * writes the upstream reports are priced at the model's `cached_input` / `cache_write` prices, to
 * the micro-dollar, in `/v1/usage`, which shows those tokens beside the cost. The upstream is a real local server answering as Anthropic does
 * with a cache hit: 100 fresh input tokens, 1,000 read from the cache, 200 written to it, 50 out.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type BackendUrls, backends } from '../../../support/backends.ts'
import { ADMIN_TOKEN, PLANS, startGateway, type TestGateway } from '../../../support/gateway.ts'

const USAGE = {
  input_tokens: 100,
  cache_read_input_tokens: 1000,
  cache_creation_input_tokens: 200,
  output_tokens: 50,
}
/** USD per 1M tokens: 100 × 3 + 1,000 × 0.3 + 200 × 3.75 + 50 × 15 = 2,100 micro-dollars a request. */
const PRICING = { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 }
const COST_MICROS = 2_100
const EPHEMERAL = { type: 'ephemeral' }

let seen: Array<Record<string, any>> = []
let upstream: ReturnType<typeof Bun.serve>
let gw: TestGateway

function answer(body: { stream?: boolean; model: string }): Response {
  const message = { id: 'msg_cache', type: 'message', role: 'assistant', model: body.model }
  if (!body.stream)
    return Response.json({
      ...message,
      content: [{ type: 'text', text: 'cached' }],
      stop_reason: 'end_turn',
      usage: USAGE,
    })
  const events = [
    { type: 'message_start', message: { ...message, content: [], usage: { ...USAGE, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'cached' } },
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn' },
      usage: { output_tokens: USAGE.output_tokens },
    },
    { type: 'message_stop' },
  ]
  const text = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')
  return new Response(text, { headers: { 'content-type': 'text/event-stream' } })
}

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as Record<string, any>
      seen.push(body)
      return answer(body as { model: string })
    },
  })
  gw = await gateway({})
})

/** A gateway whose `ant/claude-c` is the upstream above, priced, on the given storage. */
function gateway(backend: BackendUrls): Promise<TestGateway> {
  const model = {
    name: 'claude-c',
    context_window: 200_000,
    max_output_tokens: 4096,
    features: ['streaming', 'system_messages', 'tools'],
    pricing: PRICING,
  }
  return startGateway({
    backend,
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'ant',
          kind: 'anthropic',
          base_url: `http://127.0.0.1:${upstream.port}`,
          api_key: 'sk-ant-cache',
          models: [model],
        },
      ],
      plans: PLANS,
      default_plan: 'unlimited',
    },
  })
}
afterAll(async () => {
  await gw.stop()
  upstream.stop(true)
})

const post = (path: string, key: string, body: unknown, headers: Record<string, string>, on = gw) =>
  fetch(`${on.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...headers,
      ...(path === '/v1/messages'
        ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' }
        : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
  })

describe('cache_control reaches an anthropic upstream', () => {
  test('from Messages, as the client marked it (system, a message block, a tool)', async () => {
    const { key } = await gw.key('cache-messages', 'unlimited')
    seen = []
    const res = await post(
      '/v1/messages',
      key,
      {
        model: 'ant/claude-c',
        max_tokens: 100,
        system: [{ type: 'text', text: 'You are a long system prompt.', cache_control: EPHEMERAL }],
        tools: [
          { name: 'read', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral', ttl: '1h' } },
        ],
        messages: [
          {
            role: 'user',
            content: [{ type: 'text', text: 'the whole repository', cache_control: EPHEMERAL }],
          },
        ],
      },
      {},
    )
    expect(res.status).toBe(200)
    const usage = ((await res.json()) as any).usage
    expect(usage.cache_read_input_tokens).toBe(1000)
    expect(usage.cache_creation_input_tokens).toBe(200)
    const sent = seen[0]!
    expect(sent.system[0].cache_control).toEqual(EPHEMERAL)
    expect(sent.tools[0].cache_control).toEqual({ type: 'ephemeral', ttl: '1h' })
    expect(sent.messages[0].content[0].cache_control).toEqual(EPHEMERAL)
  })

  for (const stream of [false, true]) {
    test(`from chat (${stream ? 'stream' : 'JSON'}): on parts, on a whole message and on a tool`, async () => {
      const { key } = await gw.key(`cache-chat-${stream}`, 'unlimited')
      seen = []
      const res = await post(
        '/v1/chat/completions',
        key,
        {
          model: 'ant/claude-c',
          stream,
          ...(stream ? { stream_options: { include_usage: true } } : {}),
          messages: [
            {
              role: 'system',
              content: [{ type: 'text', text: 'You are a long system prompt.', cache_control: EPHEMERAL }],
            },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'the whole repository' },
                { type: 'text', text: 'and its tests', cache_control: { type: 'ephemeral', ttl: '1h' } },
              ],
            },
            { role: 'assistant', content: 'read it' },
            // LiteLLM's form: the breakpoint on the message goes on its last block.
            { role: 'user', content: 'now the question', cache_control: EPHEMERAL },
          ],
          tools: [
            {
              type: 'function',
              function: { name: 'read', parameters: { type: 'object' } },
              cache_control: EPHEMERAL,
            },
          ],
        },
        {},
      )
      expect(res.status).toBe(200)
      const text = await res.text()
      if (!stream) expect(JSON.parse(text).usage.prompt_tokens_details.cached_tokens).toBe(1000)
      else expect(text).toContain('"cached_tokens":1000')
      const sent = seen[0]!
      expect(sent.system).toEqual([
        { type: 'text', text: 'You are a long system prompt.', cache_control: EPHEMERAL },
      ])
      expect(sent.messages[0].content).toEqual([
        { type: 'text', text: 'the whole repository' },
        { type: 'text', text: 'and its tests', cache_control: { type: 'ephemeral', ttl: '1h' } },
      ])
      expect(sent.messages[2].content).toEqual([
        { type: 'text', text: 'now the question', cache_control: EPHEMERAL },
      ])
      expect(sent.tools[0].cache_control).toEqual(EPHEMERAL)
    })
  }

  test('a cache_control that is not an object: 400 naming the field', async () => {
    const { key } = await gw.key('cache-bad', 'unlimited')
    const res = await post(
      '/v1/chat/completions',
      key,
      {
        model: 'ant/claude-c',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: 'ephemeral' }] }],
      },
      {},
    )
    expect(res.status).toBe(400)
    const error = ((await res.json()) as any).error
    expect(error.code).toBe('invalid_type')
    expect(error.param).toBe('messages[0].content[0].cache_control')
  })

  test("more breakpoints than Anthropic's four: a 400 naming cache_control, not the upstream's refusal", async () => {
    const { key } = await gw.key('cache-five', 'unlimited')
    const part = (text: string) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } })
    const res = await post(
      '/v1/chat/completions',
      key,
      { model: 'ant/claude-c', messages: [{ role: 'user', content: ['a', 'b', 'c', 'd', 'e'].map(part) }] },
      {},
    )
    expect(res.status).toBe(400)
    const error = ((await res.json()) as any).error
    expect(error).toMatchObject({ code: 'invalid_value', param: 'cache_control' })
    expect(error.message).toContain('5 breakpoints')
  })
})

// SQLite and PostgreSQL keep the counters apart (PostgreSQL + Redis adds nothing to them): one
// gateway each, SQLite's the one above.
for (const backend of backends('prompt-cache.test.ts').filter((b) => b.name !== 'postgres+redis')) {
  describe.skipIf(backend.skip)(`cache reads and writes priced in /v1/usage [${backend.name}]`, () => {
    let on: TestGateway
    beforeAll(async () => {
      on = backend.name === 'sqlite' ? gw : await gateway(await backend.fresh())
    })
    afterAll(async () => {
      if (on !== gw) await on?.stop()
    })
    for (const path of ['/v1/messages', '/v1/chat/completions']) {
      test(`${path}: two requests cost 2 × 2,100 micro-dollars, cached and written tokens shown`, async () => {
        const { key } = await on.key(`cache-priced${path.replaceAll('/', '-')}`, 'unlimited')
        for (let i = 0; i < 2; i++) {
          const body = { model: 'ant/claude-c', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }
          const res = await post(path, key, body, {}, on)
          expect(res.status).toBe(200)
          await res.text()
        }
        await on.deps.recorder.flush()
        const res = await fetch(`${on.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
        const usage = (await res.json()) as any
        const today = usage.usage.today
        expect(today.cost_usd).toBe((2 * COST_MICROS) / 1e6)
        expect(usage.usage.by_model['ant/claude-c'].cost_usd).toBe((2 * COST_MICROS) / 1e6)
        expect(today.prompt_tokens).toBe(2 * 1300)
        // Of them, read from and written to the cache: shown today, over 24 h and per model.
        for (const t of [today, usage.usage.last_24h, usage.usage.by_model['ant/claude-c']]) {
          expect(t.cached_tokens).toBe(2 * 1000)
          expect(t.cache_write_tokens).toBe(2 * 200)
        }
      })
    }
  })
}
