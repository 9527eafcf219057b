/**
 * Gemini's `:embedContent` and `:batchEmbedContents` on an embedding model of an openai provider,
 * which `GET /v1beta/models` lists with both methods: translated to OpenAI's `POST /embeddings` and
 * back (DESIGN §14: translated to the other kinds). They were refused, 400 "cannot embed", the
 * openai adapter having no translated embeddings (its `/v1/embeddings` passes through).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import {
  type FakeUpstream,
  startFakeOpenAIEmbeddings,
  unitVector,
} from '../../../support/fake-openai-embeddings.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

let up: FakeUpstream<'embeddings'>
let gw: TestGateway
let key: string
beforeAll(async () => {
  up = startFakeOpenAIEmbeddings({ apiKey: 'sk-up' })
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          prefix: 'oa',
          kind: 'openai',
          base_url: `${up.url}/v1`,
          api_key: 'sk-up',
          models: [
            {
              name: 'emb',
              upstream_name: 'text-embedding-3-small',
              type: 'embedding',
              context_window: 8192,
              tier: 'free',
            },
          ],
        },
      ],
    }),
  })
  key = (await gw.key('gemini-on-openai', 'pro')).key
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const post = (method: string, body: unknown) =>
  fetch(`${gw.url}/v1beta/models/oa/emb:${method}`, {
    method: 'POST',
    headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/** The fake's vector for a text: OpenAI's float32 values, as JSON numbers. */
const vector = (text: string, dims: number) => Array.from(unitVector(text, dims))

test(':embedContent → OpenAI embeddings and back, in Gemini’s shape', async () => {
  const listed = (await (await fetch(`${gw.url}/v1beta/models?key=${key}`)).json()) as any
  expect(listed.models.find((m: any) => m.name === 'models/oa/emb').supportedGenerationMethods).toEqual([
    'embedContent',
    'batchEmbedContents',
  ])
  const res = await post('embedContent', {
    content: { parts: [{ text: 'first' }, { text: 'second' }] },
    outputDimensionality: 8,
  })
  expect(res.status).toBe(200)
  expect(await res.json()).toEqual({ embedding: { values: vector('first\nsecond', 8) } })
  expect(up.lastRequest()).toMatchObject({
    path: '/v1/embeddings',
    body: {
      model: 'text-embedding-3-small',
      input: ['first\nsecond'],
      dimensions: 8,
    },
  })
  // Floats are the API's default: not sent.
  expect(up.lastRequest()!.body.encoding_format).toBeUndefined()
})

test(':batchEmbedContents → one OpenAI call of every text, the vectors in request order', async () => {
  const before = up.requests().length
  const texts = Array.from({ length: 150 }, (_, i) => `text ${i}`)
  const res = await post('batchEmbedContents', {
    requests: texts.map((text) => ({ model: 'models/oa/emb', content: { parts: [{ text }] } })),
  })
  expect(res.status).toBe(200)
  const { embeddings } = (await res.json()) as { embeddings: Array<{ values: number[] }> }
  expect(embeddings).toHaveLength(150)
  for (const i of [0, 77, 149]) expect(embeddings[i]!.values).toEqual(vector(`text ${i}`, 1536))
  const sent = up.requests().slice(before)
  expect(sent).toHaveLength(1)
  expect(sent[0]!.body.input).toEqual(texts)
})
