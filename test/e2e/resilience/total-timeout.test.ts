/**
 * `total_ms` bounds an upstream attempt from its start (DESIGN §10), the wait for the headers
 * included: an upstream that takes 600 ms to answer and then trickles its body is given up at
 * `total_ms` (1 s) after the call, on a stream and on a whole answer alike — not `total_ms` after
 * its headers, which let an attempt run up to `first_byte_ms` + `total_ms`.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const HEADERS_AFTER_MS = 600
const TOTAL_MS = 1_000

let gw: TestGateway
let key: string
let up: ReturnType<typeof Bun.serve>
const enc = new TextEncoder()
const chunk = (content: string) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
  })}\n\n`

beforeAll(async () => {
  // Headers after 600 ms, then a piece every 100 ms (well within idle_ms), for ever.
  up = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const stream = ((await req.json()) as { stream?: boolean }).stream === true
      await Bun.sleep(HEADERS_AFTER_MS)
      let n = 0
      const body = new ReadableStream({
        async pull(c) {
          if (n > 0) await Bun.sleep(100)
          if (n++ > 100 || req.signal.aborted) return c.close()
          c.enqueue(enc.encode(stream ? chunk('word ') : n === 1 ? '{"id":"chatcmpl-1",' : ' '))
        },
      })
      return new Response(body, {
        headers: { 'content-type': stream ? 'text/event-stream' : 'application/json' },
      })
    },
  })
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          prefix: 'slow',
          kind: 'openai',
          base_url: `http://127.0.0.1:${up.port}/v1`,
          api_key: 'sk-slow',
          retry: { attempts: 0 },
          // Only total_ms may fire: the headers at 600 ms and pieces every 100 ms stay far inside the
          // others on a loaded machine (first_byte_ms 800 and idle_ms 400 were 200 and 300 ms away).
          timeouts: { first_byte_ms: 15_000, first_token_ms: 15_000, idle_ms: 15_000, total_ms: TOTAL_MS },
          models: [{ name: 'm', context_window: 8192, max_output_tokens: 100, features: ['streaming'] }],
        },
      ],
      plans: { ...PLANS, all: { rpm: null, rpd: null, models: ['*'] } },
    }),
  })
  key = (await gw.key('patient', 'all')).key
})
afterAll(async () => {
  await gw.stop()
  up.stop(true)
})

for (const stream of [true, false]) {
  test(`${stream ? 'a stream' : 'a whole answer'} is given up at total_ms from the call, not from its headers`, async () => {
    const t0 = performance.now()
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow/m', stream, messages: [{ role: 'user', content: 'hi' }] }),
    })
    const text = await res.text()
    const elapsed = performance.now() - t0
    expect(text).toContain(`did not finish within ${TOTAL_MS} ms`)
    if (!stream) expect(res.status).toBe(504)
    expect(elapsed).toBeGreaterThanOrEqual(TOTAL_MS - 50)
    // Counted from the headers it would end near 600 + 1000 ms.
    expect(elapsed).toBeLessThan(TOTAL_MS + HEADERS_AFTER_MS / 2)
  })
}
