/**
 * A long wait for the upstream's first token (6 s: model `slow-first-6000ms`) still reaches the
 * client: the 200 goes out after `stream_hold_ms`, `: keep-alive` comments flow meanwhile, and
 * Bun's socket idle timeout does not cut the wait.
 *
 * The idle timeout (1 s, the least the config takes; Bun acts on it on a coarse tick: without the
 * exemption it cut these streams at ~4 s, both of two runs) is set below the keep-alive interval
 * (3 s), so the stream's socket stays silent long enough to be cut unless chat requests are exempt
 * from the idle timeout — which is what this proves. (Bun does not time out a POST whose response
 * has not started, so the non-streamed call would survive either way; it is here to show the long
 * wait works in both modes.) The wait needs only to outlast the keep-alive after the hold
 * (0.3 + 3 s) and the cut without the exemption by a margin: 9 s with a 2 s idle timeout and a
 * 6 s keep-alive proved the same at 3 s more a run.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { type MockUpstream, startMockUpstream } from '../../../../scripts/mock-upstream.ts'
import { chatConfigDoc, readSSE, userMessage } from '../../../support/chat-bed.ts'
import { startGateway, type TestGateway } from '../../../support/gateway.ts'

/** The upstream's wait before its first token (ms). */
const WAIT_MS = 6_000
const MODEL = `mock/slow-first-${WAIT_MS}ms`
const CONTENT = 'Hello from the mock'

// The chat bed's config (chat-bed.ts) with this wait's model beside its 15 s one.
let mock: MockUpstream
let gw: TestGateway
let key: string
beforeAll(async () => {
  mock = await startMockUpstream({ chunks: 4 })
  const doc = chatConfigDoc(mock.url, { idle_timeout_s: 1, stream_keepalive_ms: 3_000, stream_hold_ms: 300 })
  const [first, ...rest] = doc.providers as Array<{ models: Array<{ name: string }> }>
  const model = { ...first!.models.find((m) => m.name === 'slow-first-15000ms')!, name: MODEL.slice(5) }
  gw = await startGateway({
    doc: { ...doc, providers: [{ ...first, models: [...first!.models, model] }, ...rest] },
  })
  key = (await gw.key('e2e', 'unlimited')).key
})
afterAll(async () => {
  await gw.stop()
  await mock.stop()
})
const post = (body: unknown) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

describe('a long wait before the first upstream token', () => {
  test('streams (raw and via the openai client) and answers non-streamed, past a 1 s idle timeout', async () => {
    const t0 = performance.now()

    const raw = (async () => {
      const res = await post({ model: MODEL, messages: userMessage(), stream: true })
      // The status is not held for the whole wait: it leaves after stream_hold_ms.
      const headersAfter = performance.now() - t0
      expect(res.status).toBe(200)
      const s = await readSSE(res)
      return { s, headersAfter }
    })()

    const viaClient = (async () => {
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 20_000 })
      const stream = await client.chat.completions.create({
        model: MODEL,
        messages: userMessage(),
        stream: true,
      })
      let content = ''
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? ''
      return content
    })()

    // Nothing reaches this client for the wait (Bun 1.4 does not idle out a POST awaiting its response).
    const plain = (async () => {
      const res = await post({ model: MODEL, messages: userMessage() })
      expect(res.status).toBe(200)
      return ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message
        .content
    })()

    const [{ s, headersAfter }, clientContent, plainContent] = await Promise.all([raw, viaClient, plain])
    const elapsed = performance.now() - t0
    expect(elapsed).toBeGreaterThanOrEqual(WAIT_MS)
    // Sent after the hold, not with the first token: well before the wait ends.
    expect(headersAfter).toBeLessThan(WAIT_MS - 3_000)

    // Keep-alive comments flowed through the wait (at the hold, then every 6 s) before any data.
    const firstData = s.items.findIndex((i) => 'data' in i)
    expect(firstData).toBeGreaterThanOrEqual(2)
    expect(s.items.slice(0, firstData).every((i) => 'comment' in i)).toBe(true)
    const content = s.events.map(
      (e) => (e.choices as Array<{ delta: { content?: string } }>)[0]?.delta.content ?? '',
    )
    expect(content.join('')).toBe(CONTENT)
    expect(s.done).toBe(true)

    expect(clientContent).toBe(CONTENT)
    expect(plainContent).toBe(CONTENT)
    expect(mock.stats.requests).toBe(3)
    expect(mock.stats.aborted).toBe(0)
  }, 40_000)
})
