/**
 * An upstream's own words that reach the client inside an answer — an in-band error event after
 * content, or a 200 whose body is an error — lose the provider's key and address, as a refused
 * request's do: whatever the key looks like (the generic patterns only catch familiar shapes),
 * and the base_url's host and port.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

/** A key of no familiar shape (a corporate proxy's): only the provider's own key names it. */
const SECRET = 'corp-proxy-key-0a1b-2c3d-4e5f'
let gw: TestGateway
let key: string
let upstream: ReturnType<typeof Bun.serve>
let anthropic: ReturnType<typeof Bun.serve>
let responses: ReturnType<typeof Bun.serve>

const sse = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`

beforeAll(async () => {
  upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const body = (await req.json()) as { stream?: boolean }
      const error = {
        error: {
          message: `key ${SECRET} refused by http://127.0.0.1:${upstream.port}/v1/chat/completions`,
          type: 'server_error',
        },
      }
      if (!body.stream) return Response.json(error)
      const content = {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'partial' }, finish_reason: null }],
      }
      return new Response(sse(content) + sse(error), { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  // Anthropic's wire: a message that starts, then an `error` event naming the key and the host.
  anthropic = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch() {
      const ev = (type: string, o: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`
      const usage = { input_tokens: 1, output_tokens: 1 }
      const message = { id: 'm', type: 'message', role: 'assistant', model: 'm', content: [], usage }
      return new Response(
        ev('message_start', { message }) +
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'partial' } }) +
          ev('error', {
            error: {
              type: 'api_error',
              message: `key ${SECRET} refused by http://127.0.0.1:${anthropic.port}/v1/messages`,
            },
          }),
        { headers: { 'content-type': 'text/event-stream' } },
      )
    },
  })
  // The Responses wire (`wire: responses`, relayed byte for byte): text, then `error` and
  // `response.failed`, both naming the key and the host.
  responses = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch() {
      const words = `key ${SECRET} refused by http://127.0.0.1:${responses.port}/v1/responses`
      const response = { id: 'resp_1', object: 'response', status: 'in_progress', model: 'm', output: [] }
      const ev = (type: string, o: object, n: number) =>
        `event: ${type}\ndata: ${JSON.stringify({ type, ...o, sequence_number: n })}\n\n`
      return new Response(
        ev('response.created', { response }, 0) +
          ev(
            'response.output_text.delta',
            { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'partial' },
            1,
          ) +
          ev('error', { code: 'server_error', message: words, param: null }, 2) +
          ev(
            'response.failed',
            { response: { ...response, status: 'failed', error: { code: 'server_error', message: words } } },
            3,
          ),
        { headers: { 'content-type': 'text/event-stream' } },
      )
    },
  })
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          prefix: 'oa',
          kind: 'openai',
          base_url: `http://127.0.0.1:${upstream.port}/v1`,
          api_key: SECRET,
          models: [{ name: 'm', context_window: 8192, max_output_tokens: 1024, features: ['streaming'] }],
        },
        {
          prefix: 're',
          kind: 'openai',
          wire: 'responses',
          base_url: `http://127.0.0.1:${responses.port}/v1`,
          api_key: SECRET,
          models: [{ name: 'm', context_window: 8192, max_output_tokens: 1024, features: ['streaming'] }],
        },
        {
          prefix: 'an',
          kind: 'anthropic',
          base_url: `http://127.0.0.1:${anthropic.port}/v1`,
          api_key: SECRET,
          models: [{ name: 'm', context_window: 8192, max_output_tokens: 1024, features: ['streaming'] }],
        },
      ],
      plans: { ...PLANS, all: { rpm: null, rpd: null, models: ['*'] } },
    }),
  })
  key = (await gw.key('inband', 'all')).key
})
afterAll(async () => {
  await gw.stop()
  upstream.stop(true)
  anthropic.stop(true)
  responses.stop(true)
})

const bodies: Record<string, (stream: boolean) => unknown> = {
  '/v1/chat/completions': (stream) => ({
    model: 'oa/m',
    stream,
    messages: [{ role: 'user', content: 'hi' }],
  }),
  '/v1/messages': (stream) => ({
    model: 'oa/m',
    stream,
    max_tokens: 50,
    messages: [{ role: 'user', content: 'hi' }],
  }),
  '/v1/responses': (stream) => ({ model: 'oa/m', stream, input: 'hi' }),
}

async function leaks(path: string, body: unknown, port: number | undefined) {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key), 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  // The error did reach the client (in-band or as the status), so its words were relayed.
  expect(text).toContain('refused by')
  return { key: text.includes(SECRET), port: text.includes(`:${port}`) }
}

for (const path of ['/v1/messages', '/v1/chat/completions']) {
  test(`anthropic, ${path} streamed: an error event after content names neither key nor address`, async () => {
    const body = { ...(bodies[path]!(true) as object), model: 'an/m' }
    expect(await leaks(path, body, anthropic.port)).toEqual({ key: false, port: false })
  })
}

test('responses pass-through streamed: error and response.failed after content name neither key nor address', async () => {
  expect(await leaks('/v1/responses', { model: 're/m', stream: true, input: 'hi' }, responses.port)).toEqual({
    key: false,
    port: false,
  })
})

for (const [path, body] of Object.entries(bodies)) {
  for (const stream of [false, true]) {
    test(`${path} (stream: ${stream}): the upstream's error names neither its key nor its address`, async () => {
      const res = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { ...bearer(key), 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body(stream)),
      })
      const text = await res.text()
      // The error did reach the client (in-band or as the status), so its words were relayed.
      expect(text).toContain('refused by')
      expect({ key: text.includes(SECRET), port: text.includes(`:${upstream.port}`) }).toEqual({
        key: false,
        port: false,
      })
    })
  }
}
