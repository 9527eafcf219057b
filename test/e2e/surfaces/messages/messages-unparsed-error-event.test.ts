/**
 * Messages passed through to Anthropic: an `error` event after content whose data is not JSON (a
 * proxy's HTML page, a cut line) is not relayed as it came — Anthropic's SDK would fail parsing
 * it (a SyntaxError, not the API error it handles) — but replaced by the gateway's own `error`
 * event in Anthropic's shape, as for a stream cut without `message_stop`.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { PLANS, startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

let gw: TestGateway
let key: string
let upstream: ReturnType<typeof Bun.serve>
/** The upstream's unparsed error data: naming nothing of ours, or naming the upstream's key. */
let unparsed = '<html>502 Bad Gateway</html>'

beforeAll(async () => {
  upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch() {
      const ev = (type: string, o: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`
      const usage = { input_tokens: 1, output_tokens: 1 }
      const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage }
      return new Response(
        ev('message_start', { message }) +
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'partial' } }) +
          `event: error\ndata: ${unparsed}\n\n`,
        { headers: { 'content-type': 'text/event-stream' } },
      )
    },
  })
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          prefix: 'an',
          kind: 'anthropic',
          base_url: `http://127.0.0.1:${upstream.port}/v1`,
          api_key: 'sk-ant-upstream-key-0001',
          models: [{ name: 'm', context_window: 8192, max_output_tokens: 1024, features: ['streaming'] }],
        },
      ],
      plans: { ...PLANS, all: { rpm: null, rpd: null, models: ['*'] } },
    }),
  })
  key = (await gw.key('unparsed', 'all')).key
})
afterAll(async () => {
  await gw.stop()
  upstream.stop(true)
})

for (const [what, data] of [
  ['naming nothing of ours', '<html>502 Bad Gateway</html>'],
  ['naming the upstream key', 'upstream refused sk-ant-upstream-key-0001 <html>'],
] as const) {
  test(`an error event whose data is not JSON (${what}): the client gets Anthropic's error shape, and its SDK an API error`, async () => {
    unparsed = data
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'an/m',
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).not.toContain('<html>')
    expect(text).not.toContain('sk-ant-upstream-key-0001')
    const errors = text
      .split('\n\n')
      .filter((f) => f.startsWith('event: error'))
      .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)))
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ type: 'error', error: { type: 'api_error' } })
    const client = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 })
    const err = await client.messages
      .stream({ model: 'an/m', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage()
      .then(
        () => null,
        (e: unknown) => e,
      )
    expect(err).toBeInstanceOf(Anthropic.APIError)
  })
}
