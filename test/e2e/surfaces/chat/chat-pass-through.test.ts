/**
 * Chat Completions → an openai provider (`wire: chat`) passes through as text (DESIGN §6): the
 * upstream receives the client's bytes except the gateway's edits (model, defaults, usage request),
 * and the client receives the upstream's bytes except `model` (and the usage it did not ask for).
 * The old decode → re-encode route rewrote what it passed: `1.50` became `1.5`, `\u00e9` became
 * `é`, spacing went — these tests compare bytes, so they fail on that route.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_TOKEN, PLANS, startGateway, type TestGateway } from '../../../support/gateway.ts'

/** What the scripted upstream answers next, and what it received. */
interface Script {
  status?: number
  contentType: string
  body: string
}
let next: Script = { contentType: 'application/json', body: '{}' }
const received: string[] = []

const upstream = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    received.push(await req.text())
    return new Response(next.body, {
      status: next.status ?? 200,
      headers: { 'content-type': next.contentType },
    })
  },
})

let gw: TestGateway
let key: string
beforeAll(async () => {
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0, stream_hold_ms: 300, stream_keepalive_ms: 5_000 },
      admin: { token: ADMIN_TOKEN },
      usage: { flush_ms: 20 },
      providers: [
        {
          prefix: 'pt',
          kind: 'openai',
          base_url: `http://127.0.0.1:${upstream.port}/v1`,
          api_key: 'sk-up',
          models: [
            {
              name: 'm',
              upstream_name: 'up-m',
              context_window: 8192,
              max_output_tokens: 500,
              features: ['streaming', 'tools', 'system_messages'],
            },
          ],
        },
      ],
      plans: PLANS,
      default_plan: 'free',
    },
  })
  key = (await gw.key('pt', 'unlimited')).key
})
afterAll(async () => {
  await gw.stop()
  await upstream.stop(true)
})

const post = (body: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  })

async function todayUsage(): Promise<{ prompt_tokens: number; completion_tokens: number }> {
  await gw.deps.recorder.flush()
  const res = await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  return ((await res.json()) as { usage: { today: any } }).usage.today
}

const MESSAGES = '[{"role":"user","content":"caf\\u00e9 \\"model\\":\\"x\\""}]'
const COMPLETION =
  '{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"up-m-2024",  "choices":[{"index":0,"message":{"role":"assistant","content":"caf\\u00e9"},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18},"x_vendor":{"score":1.50}}'

const chunk = (delta: string, finish = 'null', usage = 'null') =>
  `{"id":"c","object":"chat.completion.chunk","created":1,"model":"up-m-2024","choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}],"obfuscation":"a\\u00e9","usage":${usage}}`
const USAGE_CHUNK =
  '{"id":"c","object":"chat.completion.chunk","created":1,"model":"up-m-2024","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}'
const STREAM_CHUNKS = [
  chunk('{"role":"assistant","content":""}'),
  chunk('{"content":"caf\\u00e9"}'),
  chunk('{}', '"stop"'),
]
const sse = (events: string[]) => `${events.map((e) => `data: ${e}\n\n`).join('')}data: [DONE]\n\n`

describe('the request', () => {
  // Issue 22: no default is added (the upstream applies its own; OpenAI's reasoning models refuse
  // max_tokens), and a client's max_tokens goes as max_completion_tokens.
  test('non-stream: the client bytes, model swapped, no defaults added, stream_options dropped', async () => {
    next = { contentType: 'application/json', body: COMPLETION }
    const body = `{"messages":${MESSAGES},  "model" : "pt/m","x_unknown":{"b":1.50,"a":null},"stream_options":{"include_usage":true},"seed":null}`
    const res = await post(body)
    expect(await res.text()).toBe(COMPLETION.replace('"model":"up-m-2024"', '"model":"pt/m"'))
    expect(received.at(-1)).toBe(
      `{"messages":${MESSAGES},  "model" : "up-m","x_unknown":{"b":1.50,"a":null}}`,
    )
  })

  test('stream: usage is always asked of the upstream; the client’s own stream_options are kept', async () => {
    next = { contentType: 'text/event-stream', body: sse([...STREAM_CHUNKS, USAGE_CHUNK]) }
    await (await post(`{"model":"pt/m","messages":${MESSAGES},"stream":true,"max_tokens":20}`)).text()
    expect(received.at(-1)).toBe(
      `{"stream_options":{"include_usage":true},"max_completion_tokens":20,"model":"up-m","messages":${MESSAGES},"stream":true}`,
    )
    const own = `{"model":"pt/m","messages":${MESSAGES},"stream":true,"stream_options":{"include_usage":false,"x":1},"temperature":0.5,"max_completion_tokens":9}`
    await (await post(own)).text()
    expect(received.at(-1)).toBe(
      `{"model":"up-m","messages":${MESSAGES},"stream":true,"stream_options":{"include_usage":true,"x":1},"temperature":0.5,"max_completion_tokens":9}`,
    )
  })

  test('a duplicated key is sent as the gateway read it (the last), not as the first occurrence says', async () => {
    next = { contentType: 'application/json', body: COMPLETION }
    const res = await post(`{"model":"pt/m","max_tokens":400,"messages":${MESSAGES},"max_tokens":null}`)
    expect(res.status).toBe(200)
    const sent = JSON.parse(received.at(-1)!)
    expect(sent.model).toBe('up-m')
    // The last occurrence (null: unset) wins, and an unset limit is not filled in.
    expect('max_tokens' in sent || 'max_completion_tokens' in sent).toBe(false)
    await post(`{"model":"pt/m","max_tokens":400,"messages":${MESSAGES},"max_tokens":300}`)
    const again = JSON.parse(received.at(-1)!)
    expect(again.max_completion_tokens).toBe(300)
    expect('max_tokens' in again).toBe(false)
  })

  test('limits are still enforced before the upstream is called', async () => {
    const n = received.length
    const res = await post(`{"model":"pt/m","messages":${MESSAGES},"max_tokens":501}`)
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toMatchObject({ code: 'invalid_value', param: 'max_tokens' })
    expect(received.length).toBe(n)
  })
})

describe('the answer', () => {
  test('non-stream: the upstream bytes with only model replaced; usage recorded', async () => {
    next = { contentType: 'application/json', body: COMPLETION }
    const before = await todayUsage()
    const res = await post(`{"model":"pt/m","messages":${MESSAGES}}`)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(COMPLETION.replace('"model":"up-m-2024"', '"model":"pt/m"'))
    const after = await todayUsage()
    expect(after.prompt_tokens - before.prompt_tokens).toBe(11)
    expect(after.completion_tokens - before.completion_tokens).toBe(7)
  })

  test('non-stream: an error in a 200, or no choices → 502', async () => {
    next = { contentType: 'application/json', body: '{"error":{"message":"boom","type":"server_error"}}' }
    let res = await post(`{"model":"pt/m","messages":${MESSAGES}}`)
    expect(res.status).toBe(502)
    expect(((await res.json()) as any).error.code).toBe('upstream_error')
    next = { contentType: 'application/json', body: '{"id":"x","model":"up-m"}' }
    res = await post(`{"model":"pt/m","messages":${MESSAGES}}`)
    expect(res.status).toBe(502)
    expect(((await res.json()) as any).error.code).toBe('upstream_invalid_response')
  })

  test('stream without include_usage: chunks as sent but model, `"usage":null` cut, usage chunk withheld and recorded', async () => {
    next = { contentType: 'text/event-stream', body: sse([...STREAM_CHUNKS, USAGE_CHUNK]) }
    const before = await todayUsage()
    const res = await post(`{"model":"pt/m","messages":${MESSAGES},"stream":true}`)
    expect(res.status).toBe(200)
    const expected = STREAM_CHUNKS.map((c) =>
      c.replace('"model":"up-m-2024"', '"model":"pt/m"').replace(',"usage":null', ''),
    )
    expect(await res.text()).toBe(sse(expected))
    const after = await todayUsage()
    expect(after.prompt_tokens - before.prompt_tokens).toBe(5)
    expect(after.completion_tokens - before.completion_tokens).toBe(3)
  })

  test('stream with include_usage: `"usage":null` and the usage chunk are relayed', async () => {
    next = { contentType: 'text/event-stream', body: sse([...STREAM_CHUNKS, USAGE_CHUNK]) }
    const res = await post(
      `{"model":"pt/m","messages":${MESSAGES},"stream":true,"stream_options":{"include_usage":true}}`,
    )
    const expected = [...STREAM_CHUNKS, USAGE_CHUNK].map((c) =>
      c.replace('"model":"up-m-2024"', '"model":"pt/m"'),
    )
    expect(await res.text()).toBe(sse(expected))
  })

  test('stream: an error before content is a real HTTP error; after content, an error event', async () => {
    next = {
      contentType: 'text/event-stream',
      body: sse(['{"error":{"message":"overloaded","type":"server_error"}}']),
    }
    const first = await post(`{"model":"pt/m","messages":${MESSAGES},"stream":true}`)
    expect(first.status).toBe(502)
    expect(((await first.json()) as any).error.code).toBe('upstream_error')
    // A role-only chunk is not content (DESIGN §10): the status is still held, the error a real one.
    next = {
      contentType: 'text/event-stream',
      body: sse([STREAM_CHUNKS[0]!, '{"error":{"message":"overloaded","type":"server_error"}}']),
    }
    const roleOnly = await post(`{"model":"pt/m","messages":${MESSAGES},"stream":true}`)
    expect(roleOnly.status).toBe(502)
    expect(((await roleOnly.json()) as any).error.code).toBe('upstream_error')
    next = {
      contentType: 'text/event-stream',
      body: sse([
        STREAM_CHUNKS[0]!,
        STREAM_CHUNKS[1]!,
        '{"error":{"message":"overloaded","type":"server_error"}}',
      ]),
    }
    const later = await post(`{"model":"pt/m","messages":${MESSAGES},"stream":true}`)
    expect(later.status).toBe(200)
    const text = await later.text()
    expect(text).toContain('"code":"upstream_error"')
    expect(text).not.toContain('[DONE]')
  })
})
