/**
 * Embeddings through the attempt loop (DESIGN §10), like chat: a pool key the upstream refuses is
 * rested and the next key answers; an upstream that cannot be reached fails over to the model's
 * fallback, whose id names the answer; an embedding model's fallbacks that are chat models are
 * refused at config load (config-model-types.test.ts). One admission, one record.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { demoVector } from '../../../../src/providers/demo/embeddings.ts'
import { type FakeUpstream, startFakeOpenAIEmbeddings } from '../../../support/fake-openai-embeddings.ts'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

let up: FakeUpstream<'embeddings'>
let closed: ReturnType<typeof Bun.serve>
let gw: TestGateway
let key: string
beforeAll(async () => {
  up = startFakeOpenAIEmbeddings({ apiKey: 'sk-good' })
  // A port that was listening and is closed again: connections are refused, locally.
  closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
  const closedUrl = `http://127.0.0.1:${closed.port}/v1`
  closed.stop(true)
  const embedding = { type: 'embedding', context_window: 8192, dimensions: 1536 }
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        { ...DEMO_PROVIDER, models: [...DEMO_PROVIDER.models, { name: 'embed', ...embedding }] },
        {
          prefix: 'pool',
          kind: 'openai',
          base_url: `${up.url}/v1`,
          keys: [{ api_key: 'sk-revoked' }, { api_key: 'sk-good' }],
          retry: { backoff_ms: 5, max_backoff_ms: 10 },
          models: [{ name: 'small', upstream_name: 'text-embedding-3-small', ...embedding }],
        },
        {
          prefix: 'gone',
          kind: 'openai',
          base_url: closedUrl,
          api_key: 'sk-x',
          retry: { backoff_ms: 5, max_backoff_ms: 10 },
          models: [{ name: 'small', ...embedding, fallbacks: ['demo/embed'] }],
        },
      ],
    }),
  })
  key = (await gw.key('resilient', 'unlimited')).key
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const embed = (model: string) =>
  fetch(`${gw.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, input: ['one', 'two'], encoding_format: 'float' }),
  })

test('a refused pool key is set aside: the next key answers, the refused one is not tried again', async () => {
  const first = await embed('pool/small')
  expect(first.status).toBe(200)
  expect(((await first.json()) as any).data).toHaveLength(2)
  const keys = up.requests().map((r) => r.headers.authorization)
  expect(keys.at(-1)).toBe('Bearer sk-good')
  expect(keys).toContain('Bearer sk-revoked')
  const tried = up.requests().length
  for (let i = 0; i < 3; i++) expect((await embed('pool/small')).status).toBe(200)
  expect(
    up
      .requests()
      .slice(tried)
      .map((r) => r.headers.authorization),
  ).toEqual(Array(3).fill('Bearer sk-good'))
})

test('an unreachable upstream fails over to the fallback, which names the answer; recorded once', async () => {
  const res = await embed('gone/small')
  expect(res.status).toBe(200)
  expect(Number(res.headers.get('x-switchyard-attempts'))).toBeGreaterThan(1)
  const body = (await res.json()) as any
  expect(body.model).toBe('demo/embed')
  expect(body.data[0].embedding).toEqual(demoVector('one', 1536))
  await gw.deps.recorder.flush()
  const usage = (await (
    await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as any
  expect(usage.usage.by_model['gone/small'].requests).toBe(1)
})
