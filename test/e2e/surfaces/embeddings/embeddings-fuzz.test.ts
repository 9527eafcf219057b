/**
 * 1,000 malformed embedding bodies: every answer is a success or a 4xx naming what is wrong, never
 * a 5xx, a crash or a stall: the real gateway, with a real key, over the demo and a local OpenAI
 * upstream.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type FakeUpstream, startFakeOpenAIEmbeddings } from '../../../support/fake-openai-embeddings.ts'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'
import { generateMalformedEmbeddingBodies } from '../../../support/malformed-embedding-bodies.ts'

let upstream: FakeUpstream<'embeddings'>
let gw: TestGateway
let key: string
beforeAll(async () => {
  upstream = startFakeOpenAIEmbeddings()
  gw = await startGateway({
    doc: testConfigDoc({
      // A thousand refusals would suspend the key (that is tested elsewhere): here every body is answered.
      limits: { suspension: { enabled: false } },
      providers: [
        {
          ...DEMO_PROVIDER,
          models: [...DEMO_PROVIDER.models, { name: 'embed', type: 'embedding', context_window: 8192 }],
        },
        {
          prefix: 'oai',
          kind: 'openai',
          base_url: `${upstream.url}/v1`,
          api_key: 'sk-up',
          models: [
            {
              name: 'small',
              upstream_name: 'text-embedding-3-small',
              type: 'embedding',
              context_window: 8192,
              dimensions: 1536,
            },
          ],
        },
      ],
    }),
  })
  key = (await gw.key('fuzzer', 'unlimited')).key
})
afterAll(async () => {
  await gw.stop()
  await upstream.stop()
})

test('1,000 malformed embedding bodies: no 5xx, every 4xx an OpenAI error body', async () => {
  const bodies = generateMalformedEmbeddingBodies(23, 1000, ['demo/embed', 'oai/small'])
  const statuses = new Map<number, number>()
  const failures: string[] = []
  for (const { body, mutation } of bodies) {
    const res = await fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body,
      signal: AbortSignal.timeout(10_000),
    })
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
    const text = await res.text()
    if (res.status >= 500) failures.push(`${res.status} after ${mutation}: ${text.slice(0, 200)}`)
    else if (res.status >= 400 && typeof JSON.parse(text).error?.message !== 'string') {
      failures.push(`${res.status} without an error body after ${mutation}`)
    }
  }
  console.log('embeddings fuzz statuses:', Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))
  expect(failures).toEqual([])
  // The fuzz reaches both outcomes, so it tests something.
  expect(statuses.get(200)).toBeGreaterThan(0)
  expect(statuses.get(400)).toBeGreaterThan(100)
})
