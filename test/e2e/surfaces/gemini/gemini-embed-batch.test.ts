/**
 * `:batchEmbedContents` passed through to a gemini provider: Gemini takes at most 100 requests a
 * batch, the gateway's surface up to 2,048 (as on every other route). A longer batch went up whole
 * and Gemini refused it; now it goes in parts of 100, one after another, and the client gets one
 * answer, its embeddings in request order — as `/v1/embeddings` on a gemini provider splits.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type FakeUpstream, startFakeGeminiEmbeddings } from '../../../support/fake-gemini-embeddings.ts'
import { unitVector } from '../../../support/fake-openai-embeddings.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

let up: FakeUpstream<'embeddings'>
let gw: TestGateway
let key: string
beforeAll(async () => {
  up = startFakeGeminiEmbeddings({ apiKey: 'AIza-up' })
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          prefix: 'gem',
          kind: 'gemini',
          base_url: up.url,
          api_key: 'AIza-up',
          models: [
            {
              name: 'embed',
              upstream_name: 'gemini-embedding-001',
              type: 'embedding',
              context_window: 2048,
              tier: 'free',
            },
          ],
        },
      ],
    }),
  })
  key = (await gw.key('batch', 'pro')).key
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const batch = (n: number) => ({
  requests: Array.from({ length: n }, (_, i) => ({
    model: 'models/gem/embed',
    content: { parts: [{ text: `text ${i}` }] },
    taskType: 'RETRIEVAL_DOCUMENT',
    outputDimensionality: 4,
  })),
})

const post = (body: unknown) =>
  fetch(`${gw.url}/v1beta/models/gem/embed:batchEmbedContents`, {
    method: 'POST',
    headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

test('250 requests → three upstream batches of 100, 100 and 50; one answer, in order', async () => {
  const before = up.requests().length
  const res = await post(batch(250))
  expect(res.status).toBe(200)
  const { embeddings } = (await res.json()) as { embeddings: Array<{ values: number[] }> }
  expect(embeddings).toHaveLength(250)
  // Each the vector of its own text (the fake's: the full one cut to 4 values).
  for (const i of [0, 99, 100, 199, 200, 249])
    expect(embeddings[i]!.values).toEqual(Array.from(unitVector(`text ${i}`, 3072).subarray(0, 4)))
  const sent = up.requests().slice(before)
  expect(sent.map((r) => r.body.requests.length)).toEqual([100, 100, 50])
  expect(sent[1]!.body.requests[0].content.parts[0].text).toBe('text 100')
  // Passed through as sent: each request's own fields kept, its model the provider's name.
  expect(sent[2]!.body.requests[49]).toMatchObject({
    model: 'models/gemini-embedding-001',
    taskType: 'RETRIEVAL_DOCUMENT',
  })
})

test('100 requests or fewer → one upstream call, the answer as it came', async () => {
  const before = up.requests().length
  const res = await post(batch(100))
  expect(res.status).toBe(200)
  expect(((await res.json()) as any).embeddings).toHaveLength(100)
  expect(up.requests().length - before).toBe(1)
})
