/**
 * A 15-second wait for the upstream's first token (model `slow-first-15000ms`) still reaches the
 * client: the 200 goes out after `stream_hold_ms`, `: keep-alive` comments flow meanwhile, and
 * Bun's socket idle timeout does not cut the wait.
 *
 * The idle timeout (2 s; Bun acts on it within about twice that) is set far below the keep-alive
 * interval (6 s), so the stream's socket stays silent long enough to be cut unless chat
 * requests are exempt from the idle timeout — which is what this proves. (Bun does not time out a
 * POST whose response has not started, so the non-streamed call would survive either way; it is
 * here to show the long wait works in both modes.)
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type ChatBed, readSSE, startChatBed, userMessage } from '../../../support/chat-bed.ts'

let bed: ChatBed
beforeAll(async () => {
  bed = await startChatBed({ server: { idle_timeout_s: 2, stream_keepalive_ms: 6_000, stream_hold_ms: 300 } })
})
afterAll(() => bed.stop())

const MODEL = 'mock/slow-first-15000ms'
const CONTENT = 'Hello from the mock'

describe('a long wait before the first upstream token', () => {
  test('streams (raw and via the openai client) and answers non-streamed, past a 2 s idle timeout', async () => {
    const t0 = performance.now()

    const raw = (async () => {
      const res = await bed.post({ model: MODEL, messages: userMessage(), stream: true })
      // The status is not held for the whole wait: it leaves after stream_hold_ms.
      const headersAfter = performance.now() - t0
      expect(res.status).toBe(200)
      const s = await readSSE(res)
      return { s, headersAfter }
    })()

    const viaClient = (async () => {
      const stream = await bed
        .client()
        .chat.completions.create({ model: MODEL, messages: userMessage(), stream: true })
      let content = ''
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? ''
      return content
    })()

    // Nothing reaches this client for 15 s (Bun 1.4 does not idle out a POST awaiting its response).
    const plain = (async () => {
      const res = await bed.post({ model: MODEL, messages: userMessage() })
      expect(res.status).toBe(200)
      return ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message
        .content
    })()

    const [{ s, headersAfter }, clientContent, plainContent] = await Promise.all([raw, viaClient, plain])
    const elapsed = performance.now() - t0
    expect(elapsed).toBeGreaterThanOrEqual(15_000)
    expect(headersAfter).toBeLessThan(10_000)

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
    expect(bed.mock.stats.requests).toBe(3)
    expect(bed.mock.stats.aborted).toBe(0)
  }, 40_000)
})
