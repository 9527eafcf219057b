/**
 * Google refuses a bad API key with 400 `INVALID_ARGUMENT` (reason `API_KEY_INVALID`), not a 401:
 * for the attempt loop it is a credential failure all the same (DESIGN §10) — that key rests and
 * the pool's next key is tried at once — not the request's own fault, which is never retried.
 * On chat and on embeddings, against local upstreams that refuse a wrong key as Google does.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startFakeGemini } from '../../support/fake-gemini.ts'
import { startFakeGeminiEmbeddings } from '../../support/fake-gemini-embeddings.ts'
import type { FakeUpstream } from '../../support/fake-upstream.ts'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const GOOD = 'AIza-good-key-0123456789abcdefghij'
const REVOKED = 'AIza-revoked-0123456789abcdefghij'

let chatUp: FakeUpstream<string>
let embedUp: FakeUpstream<'embeddings'>
let gw: TestGateway
let key: string
beforeAll(async () => {
  chatUp = (await startFakeGemini({ apiKey: GOOD })) as FakeUpstream<string>
  embedUp = startFakeGeminiEmbeddings({ apiKey: GOOD })
  // The revoked key first: the pool's first pick.
  const pool = {
    keys: [{ api_key: REVOKED }, { api_key: GOOD }],
    retry: { backoff_ms: 5, max_backoff_ms: 10 },
  }
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          prefix: 'gchat',
          kind: 'gemini',
          base_url: chatUp.url,
          ...pool,
          models: [
            {
              name: 'flash',
              upstream_name: 'gemini-2.5-flash',
              context_window: 8192,
              max_output_tokens: 1024,
              features: ['streaming'],
            },
          ],
        },
        {
          prefix: 'gembed',
          kind: 'gemini',
          base_url: embedUp.url,
          ...pool,
          models: [
            {
              name: 'embed',
              upstream_name: 'gemini-embedding-001',
              type: 'embedding',
              context_window: 2048,
              dimensions: 3072,
            },
          ],
        },
      ],
      plans: { ...PLANS, all: { rpm: null, rpd: null, models: ['*'] } },
    }),
  })
  key = (await gw.key('pooled', 'all')).key
})
afterAll(async () => {
  await gw.stop()
  await chatUp.stop()
  await embedUp.stop()
})

const keysSeen = (up: FakeUpstream<string>) => up.requests().map((r) => r.headers['x-goog-api-key'])

test('chat: the revoked key is tried once and rests; the good key answers this request and the next', async () => {
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gchat/flash', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect([i, res.status]).toEqual([i, 200])
  }
  expect(keysSeen(chatUp)).toEqual([REVOKED, GOOD, GOOD, GOOD])
})

test('embeddings: likewise', async () => {
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gembed/embed', input: ['one', 'two'], encoding_format: 'float' }),
    })
    expect([i, res.status]).toEqual([i, 200])
  }
  expect(keysSeen(embedUp as FakeUpstream<string>)).toEqual([REVOKED, GOOD, GOOD, GOOD])
})
