/**
 * An `error` event in a pass-through Responses stream after content: the client (the OpenAI SDKs
 * throw at this event) stops reading there, before the upstream closes its stream. It was recorded
 * as a client that left — 499 in the request log and the metrics, and the circuit never told. It
 * is the upstream's failure: 502 with the upstream's code, an upstream error and a failed attempt
 * in `/metrics`, and the circuit counts it (a second one opens it).
 *
 * The upstream is local and answers as OpenAI's live API does (the recorded text stream's opening
 * and first delta, then an in-band `error`), then holds its connection open — its `response.failed`
 * not yet sent — until the gateway lets it go.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { RECORDED, readLines } from '../../../support/fake-upstream.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../../../support/gateway.ts'
import { eventErrors } from '../../../support/open-responses-schema.ts'

let gw: TestGateway
let upstream: ReturnType<typeof Bun.serve>
let key: string
let calls = 0

const SERVER_ERROR = {
  type: 'server_error',
  code: 'server_error',
  message: 'The server had an error while processing your request.',
  param: null,
}

beforeAll(async () => {
  const lines = (await readLines(new URL('openai-responses-text.chunks.txt', RECORDED))).map((l) =>
    JSON.parse(l),
  )
  const head = lines.slice(0, lines.findIndex((e) => e.type === 'response.output_text.delta') + 1)
  const events = [...head, { type: 'error', sequence_number: head.length, error: SERVER_ERROR }]
  const frames = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')
  upstream = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    fetch() {
      calls++
      // The events, then the connection held open (`response.failed` would follow): no end yet.
      let sent = false
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent) return new Promise<void>(() => {})
          sent = true
          c.enqueue(new TextEncoder().encode(frames))
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      usage: { flush_ms: 20 },
      providers: [
        {
          prefix: 'oa',
          kind: 'openai',
          wire: 'responses',
          base_url: `http://127.0.0.1:${upstream.port}/v1`,
          api_key: 'sk-oa-0001',
          retry: { attempts: 0 },
          circuit: { failures: 2, cooldown_s: 60 },
          // A circuit per model: `reader` keeps its own count.
          models: ['solo', 'reader'].map((name) => ({
            name,
            context_window: 128_000,
            max_output_tokens: 4096,
            features: ['streaming'],
          })),
        },
      ],
      plans: { open: { rpm: null, rpd: null, models: ['*'] } },
      default_plan: 'open',
    },
  })
  key = (await gw.key('sdk-user', 'open')).key
})
afterAll(async () => {
  await gw.stop()
  upstream.stop(true)
})

/** Reads the stream as the OpenAI SDK does: up to the `error` event, then it stops and leaves. */
async function readUntilError(): Promise<string | null> {
  const ac = new AbortController()
  const res = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'oa/solo', input: 'Say OK', stream: true }),
    signal: ac.signal,
  })
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  let text = ''
  while (!text.includes('event: error\n')) {
    const { value, done } = await reader.read()
    if (done) break
    text += new TextDecoder().decode(value)
  }
  ac.abort()
  return res.headers.get('x-request-id')
}

const metric = async (pattern: RegExp): Promise<number> => {
  const text = await (await fetch(`${gw.url}/metrics`)).text()
  return text
    .split('\n')
    .filter((l) => pattern.test(l))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0)
}

async function row(rid: string | null): Promise<any> {
  await gw.deps.recorder.flush()
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${gw.url}/admin/v1/requests?limit=10`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    })
    const found = ((await r.json()) as any).data.find((x: any) => x.request_id === rid)
    if (found) return found
    await Bun.sleep(10)
    await gw.deps.recorder.flush()
  }
  return null
}

test('the client leaves at the error event: the upstream failure is recorded, counted and judged', async () => {
  const rid = await readUntilError()
  expect(await row(rid)).toMatchObject({ status: 502, error_code: 'upstream_error' })
  expect(await metric(/^switchyard_requests_total\{.*status="499"/)).toBe(0)
  expect(await metric(/^switchyard_requests_total\{.*surface="responses".*status="502"/)).toBe(1)
  expect(await metric(/^switchyard_upstream_errors_total\{.*provider="oa"/)).toBe(1)
  expect(await metric(/^switchyard_upstream_attempts_total\{.*provider="oa".*outcome="transient"/)).toBe(1)

  // The circuit counts it (failures: 2): after a second, the next request is refused unasked.
  await row(await readUntilError())
  const res = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'oa/solo', input: 'Say OK', stream: true }),
  })
  expect(res.status).toBe(503)
  expect(((await res.json()) as any).error.code).toBe('upstream_circuit_open')
  expect(calls).toBe(2)
})

test('a client that reads on: the upstream let go at its error, the stream ends with the response.failed it would send', async () => {
  const res = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'oa/reader', input: 'Say OK', stream: true }),
  })
  const events = (await res.text())
    .split('\n\n')
    .filter((f) => f.includes('data: '))
    .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)))
  for (const e of events) expect(eventErrors(e)).toEqual([])
  expect(events.slice(-2).map((e) => e.type)).toEqual(['error', 'response.failed'])
  expect(events.at(-2).error).toEqual(SERVER_ERROR)
  expect(events.at(-1).response).toMatchObject({
    status: 'failed',
    model: 'oa/reader',
    error: { code: 'server_error', message: expect.stringContaining(SERVER_ERROR.message) },
  })
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
  expect(await row(res.headers.get('x-request-id'))).toMatchObject({
    status: 502,
    error_code: 'upstream_error',
  })
})
