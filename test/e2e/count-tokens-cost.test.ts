/**
 * Issue 22 finding 3: `POST /v1/messages/count_tokens` with a 9 MB body cost 0.8–1 s of tokenizing
 * on the event loop (and is not counted against the plan): four loops from one key pushed
 * `/healthz` to p90 430 ms. The tokenizer now sees a bounded prefix and the rest is extrapolated,
 * so a call costs about what a chat request of the same size does.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { bearer, startGateway, type TestGateway } from '../support/gateway.ts'

let gw: TestGateway
let key: string
beforeAll(async () => {
  gw = await startGateway()
  key = (await gw.key('counter', 'unlimited')).key
})
afterAll(() => gw.stop())

/** Varied text (a repeated phrase tokenizes from a cache and hides the cost). */
function variedText(chars: number): string {
  let seed = 7
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789 .,'
  const out: string[] = []
  for (let i = 0; i < chars; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    out.push(alphabet[seed % alphabet.length]!)
  }
  return out.join('')
}

const TEXT = variedText(9_000_000)

async function timed(path: string, body: unknown): Promise<{ ms: number; status: number; json: any }> {
  const started = performance.now()
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  })
  const json = await res.json()
  return { ms: performance.now() - started, status: res.status, json }
}

test('a 9 MB count_tokens call costs about a chat request of the same size; the estimate stays close', async () => {
  const messages = [{ role: 'user', content: TEXT }]
  // Warm-up: the tokenizer's tables load on first use.
  await timed('/v1/messages/count_tokens', {
    model: 'demo/echo',
    messages: [{ role: 'user', content: 'hi' }],
  })
  const chat = await timed('/v1/chat/completions', { model: 'demo/echo-pro', messages, max_tokens: 16 })
  const count = await timed('/v1/messages/count_tokens', { model: 'demo/echo', messages })
  expect(count.status).toBe(200)
  console.log(
    `9 MB: chat ${chat.ms.toFixed(0)} ms (status ${chat.status}), count_tokens ${count.ms.toFixed(0)} ms`,
  )
  // Unbounded, the tokenizer alone took 800–1,000 ms here.
  expect(count.ms).toBeLessThan(Math.max(3 * chat.ms, 300))
  // The text is uniform, so the extrapolation from its first part is close to an exact count
  // (1.5 characters a token for this alphabet soup).
  const exact = TEXT.length / 1.5
  expect(Math.abs(count.json.input_tokens - exact) / exact).toBeLessThan(0.02)
}, 30_000)
