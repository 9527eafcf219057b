/**
 * The Anthropic-format `GET /v1/models` (a request with `anthropic-version`, as Claude Code's model
 * picker sends it) lists chat models only: `demo/embed` there was a model every turn of Claude
 * Code refused. The OpenAI format still lists every model the plan allows, embeddings included.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

let gw: TestGateway
let key: string

beforeAll(async () => {
  const demo = structuredClone(DEMO_PROVIDER)
  ;(demo.models as unknown[]).push({
    name: 'embed',
    type: 'embedding',
    context_window: 8192,
    dimensions: 64,
    tier: 'free',
  })
  gw = await startGateway({ doc: testConfigDoc({ providers: [demo] }) })
  key = (await gw.key('picker', 'free')).key
})
afterAll(() => gw.stop())

const anthropic = () => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' })

test('the Anthropic-format list holds the chat models and no embedding model', async () => {
  const res = await fetch(`${gw.url}/v1/models`, { headers: anthropic() })
  expect(res.status).toBe(200)
  const body = (await res.json()) as { data: { id: string; type: string }[]; last_id: string }
  expect(body.data.map((m) => m.id)).toEqual(['demo/echo'])
  expect(body.data.every((m) => m.type === 'model')).toBe(true)
  expect(body.last_id).toBe('demo/echo')
})

test('the embedding model by id in the Anthropic format: 404, as a model the client cannot call', async () => {
  const res = await fetch(`${gw.url}/v1/models/demo/embed`, { headers: anthropic() })
  expect(res.status).toBe(404)
  const chat = await fetch(`${gw.url}/v1/models/demo/echo`, { headers: anthropic() })
  expect(((await chat.json()) as { id: string }).id).toBe('demo/echo')
})

test('the OpenAI-format list still names every model the plan allows, with its type', async () => {
  const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
  const body = (await res.json()) as { data: { id: string; type: string }[] }
  expect(body.data.map((m) => [m.id, m.type])).toEqual([
    ['demo/echo', 'chat'],
    ['demo/embed', 'embedding'],
  ])
})
