/**
 * The gateway's own fault inside an attempt (DESIGN §10): an Anthropic answer whose `content`
 * holds a `null` block passes the adapter's shape check (an object with an id and a content array)
 * and throws a TypeError in the translation to a chat completion. That is no upstream failure: the
 * client is answered 500 `internal_error` after one attempt (no retry, no other key of the
 * provider: they go through the same code), the attempt is counted under kind `internal`, it is
 * logged at error with its stack, and the (key, model) circuit — which one failure would open here
 * — stays closed for another account's request. Nothing of the failed request is billed. A
 * stream likewise: a `content_block_start` with a null block throws in the stream's translation,
 * read as the upstream's body (it was taken for a cut connection, retried and counted against the
 * circuit).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

const UPSTREAM_KEY = 'sk-ant-upstream-0123456789'

let gw: TestGateway
let up: ReturnType<typeof Bun.serve>
let calls = 0

/** An Anthropic message; `odd`: a null block among its content, which no translator expects. */
const message = (odd: boolean) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'm',
  content: odd ? [null] : [{ type: 'text', text: 'fine' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 3, output_tokens: 1 },
})

const START = {
  type: 'message_start',
  message: { ...message(false), content: [], usage: { input_tokens: 3, output_tokens: 0 } },
}
const EVENTS = [
  START,
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'fine' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } },
  { type: 'message_stop' },
]
/** A block of null before any content: the stream's translation throws on it. */
const ODD_EVENTS = [START, { type: 'content_block_start', index: 0, content_block: null }, ...EVENTS.slice(2)]

beforeAll(async () => {
  up = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      calls++
      const body = (await req.json()) as { messages: Array<{ content: unknown }>; stream?: boolean }
      const odd = JSON.stringify(body.messages).includes('odd')
      if (!body.stream) return Response.json(message(odd))
      const events = odd ? ODD_EVENTS : EVENTS
      const sse = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')
      return new Response(sse, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  const model = {
    name: 'm',
    context_window: 128_000,
    max_output_tokens: 1000,
    features: ['streaming', 'system_messages'],
  }
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'ant',
          kind: 'anthropic',
          base_url: `http://127.0.0.1:${up.port}`,
          keys: [{ api_key: UPSTREAM_KEY }, { api_key: `${UPSTREAM_KEY}-b` }],
          retry: { attempts: 2, backoff_ms: 1, max_backoff_ms: 1 },
          // One failure opens a circuit: a gateway bug counted as one would pause the model.
          circuit: { failures: 1, cooldown_s: 60 },
          models: [model],
        },
      ],
      // `open`: a JSON request is asked as JSON; `t` (a token limit): asked as a stream and cut.
      plans: {
        open: { rpm: null, rpd: null, models: ['*'] },
        t: { rpm: null, rpd: null, models: ['*'], tpm: 100_000 },
      },
      default_plan: 't',
    },
  })
}, 30_000)

afterAll(async () => {
  await gw?.stop()
  up?.stop(true)
})

const ask = (key: string, text: string, stream = false) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'ant/m', messages: [{ role: 'user', content: text }], stream }),
  })

const internalAttempts = async () => {
  const metrics = await (await fetch(`${gw.url}/metrics`)).text()
  expect(metrics).not.toMatch(/outcome="transient"/)
  const m = metrics.match(
    /switchyard_upstream_attempts_total\{provider="ant",model="m",outcome="internal"\} (\d+)/,
  )
  return Number(m?.[1] ?? 0)
}

test('a translation that throws: 500 internal_error in one attempt, counted as internal, the circuit closed for everyone', async () => {
  const a = await gw.key('alice', 'open')
  const b = await gw.key('bob', 'open')
  const res = await ask(a.key, 'say something odd')
  const body = (await res.json()) as { error: { code: string; type: string; message: string } }
  expect(res.status, JSON.stringify(body)).toBe(500)
  expect(body.error.code).toBe('internal_error')
  expect(body.error.type).toBe('api_error')
  expect(res.headers.get('x-request-id')).toBeTruthy()
  expect(res.headers.get('x-switchyard-attempts')).toBe('1')
  expect(calls).toBe(1)

  // Another account's request on the same (key, model) goes through: no circuit opened.
  const ok = await ask(b.key, 'hello')
  expect(ok.status, await ok.clone().text()).toBe(200)
  expect(ok.headers.get('x-switchyard-attempts')).toBe('1')
  expect(calls).toBe(2)

  expect(await internalAttempts()).toBe(1)

  // Logged at error with the stack (the translator's frame), never the upstream's key.
  const line = gw.logs.find((l) => l.includes('upstream attempt failed') && l.includes('"internal"'))
  expect(line).toBeDefined()
  expect(JSON.parse(line!).level).toBe('error')
  expect(line).toContain('convert-anthropic-response')
  expect(line).not.toContain(UPSTREAM_KEY)
})

test('a stream whose translation throws before content (on a token plan): 500 internal_error in one attempt, the circuit closed, nothing billed', async () => {
  const a = await gw.key('carol', 't')
  const b = await gw.key('dave', 't')
  const before = calls
  const internal = await internalAttempts()
  const res = await ask(a.key, 'stream something odd', true)
  const body = (await res.json()) as { error: { code: string } }
  expect(res.status, JSON.stringify(body)).toBe(500)
  expect(body.error.code).toBe('internal_error')
  expect(res.headers.get('x-switchyard-attempts')).toBe('1')
  expect(calls - before).toBe(1)
  expect(await internalAttempts()).toBe(internal + 1)

  const ok = await ask(b.key, 'hello', true)
  const text = await ok.text()
  expect(ok.status, text).toBe(200)
  expect(text).toContain('fine')
  expect(text).toContain('[DONE]')
  expect(ok.headers.get('x-switchyard-attempts')).toBe('1')
  const line = gw.logs.findLast((l) => l.includes('upstream attempt failed'))
  expect(JSON.parse(line!).level).toBe('error')
  expect(line).toContain('anthropic-stream-transform')

  // The failed request is settled to nothing (its hold given back): carol's minute holds no
  // tokens, dave's his answer's.
  const usage = async (key: string) => {
    const deadline = performance.now() + 10_000
    for (;;) {
      const u = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
      if (u.usage?.current_minute?.tokens > 0 || performance.now() > deadline) return u
      await Bun.sleep(25)
    }
  }
  expect((await usage(b.key)).usage.current_minute.tokens).toBe(4)
  const carol = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(a.key) })).json()) as any
  expect(carol.usage.current_minute.tokens).toBe(0)
})

test("the overview shows the gateway's own faults apart: neither the provider's failures nor its upstream errors", async () => {
  // After the two tests above: two internal attempts of ant/m, two answered, no provider failure.
  const admin = (path: string) =>
    fetch(`${gw.url}/admin/v1${path}`, { headers: bearer(ADMIN_TOKEN) }).then((r) => r.json() as any)
  const upstreams = await admin('/overview/upstreams')
  const m = upstreams.models.find((x: any) => x.provider === 'ant' && x.model === 'm')
  expect([m.attempts, m.failed, m.gateway_faults, m.client_faults, m.failures]).toEqual([
    4,
    0,
    2,
    0,
    { internal: 2 },
  ])
  // /metrics likewise: two 500s of the chat surface, no upstream error of ant's.
  const metrics = await (await fetch(`${gw.url}/metrics`)).text()
  expect(metrics).toContain('switchyard_requests_total{surface="chat",model="ant/m",status="500"} 2')
  expect(metrics).not.toContain('switchyard_upstream_errors_total{provider="ant"')
  // The request log's figure (written off the request path: read until both 500s are there).
  const deadline = performance.now() + 10_000
  let ant: any
  for (;;) {
    ant = (await admin('/overview/providers')).data.find((p: any) => p.provider === 'ant')
    if (ant.requests >= 4 || performance.now() > deadline) break
    await Bun.sleep(25)
  }
  expect([ant.requests, ant.upstream_errors, ant.error_rate, ant.gateway_errors, ant.errors_by_code]).toEqual(
    [4, 0, 0, 2, []],
  )
})
