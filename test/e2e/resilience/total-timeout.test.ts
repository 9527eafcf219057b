/**
 * `total_ms` bounds an upstream attempt from its start (DESIGN §10), the wait for the headers
 * included: an upstream that takes 1 s to send its headers and then trickles its body, ending it
 * 1.5 s later, is given up at `total_ms` (2 s) after the call, on a stream and on a whole answer
 * alike — not `total_ms` after its headers, which would have let its whole answer through.
 * The proof is which came first, the gateway's give-up or the upstream's end, not a duration: a
 * loaded machine delays both sides alike (1 s of margin for the headers, 0.5 s for the end).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const HEADERS_AFTER_MS = 1_000
/** The upstream's answer ends this long after its headers: past total_ms from the call, not from them. */
const ENDS_AFTER_HEADERS_MS = 1_500
const PIECE_MS = 100
const TOTAL_MS = 2_000

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
/** The rest of the whole answer after `{"id":"chatcmpl-1",`: a complete chat completion. */
const WHOLE_END = JSON.stringify({
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
}).slice(1)

beforeAll(async () => {
  // Headers after 1 s, then a piece every 100 ms (well within idle_ms), then the answer's end.
  up = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const stream = ((await req.json()) as { stream?: boolean }).stream === true
      await Bun.sleep(HEADERS_AFTER_MS)
      // The end is due by the clock, not by counted sleeps: on a loaded machine 15 sleeps of 100 ms
      // add up past 1.5 s, and an end later than total_ms from the headers would let the bug pass.
      const headersAt = performance.now()
      let n = 0
      const body = new ReadableStream({
        async pull(c) {
          if (n > 0)
            await Bun.sleep(
              Math.min(PIECE_MS, Math.max(0, headersAt + ENDS_AFTER_HEADERS_MS - performance.now())),
            )
          if (req.signal.aborted) return c.close()
          if (n++ === 0 || performance.now() - headersAt < ENDS_AFTER_HEADERS_MS)
            c.enqueue(enc.encode(stream ? chunk('word ') : n === 1 ? '{"id":"chatcmpl-1",' : ' '))
          else {
            c.enqueue(enc.encode(stream ? `${chunk('')}data: [DONE]\n\n` : WHOLE_END))
            c.close()
          }
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
          // Only total_ms may fire: the headers at 1 s and pieces every 100 ms stay far inside the
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

// Both at once: each waits out total_ms (2 s), which need not be paid twice.
test('a stream and a whole answer are given up at total_ms from the call, not from its headers', async () => {
  const outcomes = await Promise.all(
    [true, false].map(async (stream) => {
      const t0 = performance.now()
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow/m', stream, messages: [{ role: 'user', content: 'hi' }] }),
      })
      const text = await res.text()
      return { stream, status: res.status, text, elapsed: performance.now() - t0 }
    }),
  )
  for (const { stream, status, text, elapsed } of outcomes) {
    // The gateway gave up before the upstream ended its answer (at 2.5 s from the call): counted
    // from the headers, total_ms would have ended at 3 s and the answer gone through whole.
    expect([stream, text]).toEqual([stream, expect.stringContaining(`did not finish within ${TOTAL_MS} ms`)])
    expect(text).not.toContain('[DONE]')
    if (!stream) expect(status).toBe(504)
    // Not before total_ms (a loaded machine only makes it later).
    expect(elapsed).toBeGreaterThanOrEqual(TOTAL_MS - 50)
  }
})
