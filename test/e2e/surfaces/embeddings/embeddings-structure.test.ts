/**
 * DESIGN §16 on `/v1/embeddings`: its structural limits make room for OpenAI's 300,000 token ids a
 * request, and for nothing else. The room was once a raised element count (302,112), which object
 * members shared: a 3.4 MB `{"model": …, "input": "hi", "x": {"k0": 1, …, "k299999": 1}}` was
 * parsed whole (7–10 × a valid body's CPU) and, on an openai route, forwarded. Now object members,
 * strings and containers are held to chat's 100,000 (json/limits.ts `maxArrayScalars`), refused
 * before any parse and before the upstream; token ids still reach it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type FakeUpstream, startFakeOpenAIEmbeddings } from '../../../support/fake-openai-embeddings.ts'
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
          prefix: 'oai',
          kind: 'openai',
          base_url: `${up.url}/v1`,
          api_key: 'sk-up',
          models: [
            {
              name: 'small',
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
  key = (await gw.key('structure', 'pro')).key
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const post = (body: string) =>
  fetch(`${gw.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  })

const members = (n: number) => Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')

test('300,000 object members on an openai route → 400 naming the limit, never forwarded', async () => {
  const sent = up.requests().length
  const res = await post(`{"model":"oai/small","input":"hi","x":{${members(300_000)}}}`)
  expect(res.status).toBe(400)
  const error = ((await res.json()) as any).error
  expect(error.code).toBe('invalid_value')
  expect(error.message).toContain('more than 100000 array items and object members besides numbers in arrays')
  expect(up.requests().length).toBe(sent)
})

test('300,000 token ids in 1,000 arrays still reach the upstream, as OpenAI takes them', async () => {
  const input = Array.from({ length: 1000 }, (_, i) => Array(300).fill(i))
  const res = await post(JSON.stringify({ model: 'oai/small', input, dimensions: 4 }))
  expect(res.status).toBe(200)
  expect(((await res.json()) as any).data).toHaveLength(1000)
  expect(up.lastRequest()?.body.input).toHaveLength(1000)
})
