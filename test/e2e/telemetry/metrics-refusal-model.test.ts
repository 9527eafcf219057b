/**
 * A request refused for what its body holds is counted under its model when the model is one the
 * gateway knows (audit 65a: a `/v1/messages` 400 "max_tokens is required" for demo/echo was
 * counted under `model=""`, while chat's refusals after routing were under the model). A model no
 * catalogue entry names stays `""`: a label takes only the catalogue's ids, whatever is sent.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import {
  bearer,
  DEMO_PROVIDER,
  startGateway,
  type TestGateway,
  testConfigDoc,
} from '../../support/gateway.ts'

let gw: TestGateway
let key: string
beforeAll(async () => {
  const embed = { name: 'embed', type: 'embedding', context_window: 8192, dimensions: 64, tier: 'free' }
  const doc = testConfigDoc({ providers: [{ ...DEMO_PROVIDER, models: [...DEMO_PROVIDER.models, embed] }] })
  gw = await startGateway({ doc })
  key = (await gw.key('acme', 'unlimited')).key
})
afterAll(() => gw.stop())

const json = (path: string, body: unknown) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key), 'x-goog-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

const hello = [{ role: 'user', content: 'hi' }]

test.each([
  ['chat', '/v1/chat/completions', (model: string) => ({ model, messages: 5 })],
  ['messages', '/v1/messages', (model: string) => ({ model, messages: hello })],
  ['responses', '/v1/responses', (model: string) => ({ model, input: 5 })],
] as const)(
  '%s: a 400 in the body is counted under a known model, an unknown one under ""',
  async (surface, path, body) => {
    expect((await json(path, body('demo/echo'))).status).toBe(400)
    expect((await json(path, body('nope/never'))).status).toBe(400)
    const text = await (await fetch(`${gw.url}/metrics`)).text()
    expect(text).toContain(`switchyard_requests_total{surface="${surface}",model="demo/echo",status="400"} 1`)
    expect(text).toContain(`switchyard_requests_total{surface="${surface}",model="",status="400"} 1`)
    expect(text).not.toContain('nope/never')
  },
)

test('gemini: a 400 in the body is counted under the model its path names, when known', async () => {
  expect((await json('/v1beta/models/demo/echo:generateContent', { contents: 5 })).status).toBe(400)
  expect((await json('/v1beta/models/nope/never:generateContent', { contents: 5 })).status).toBe(400)
  const text = await (await fetch(`${gw.url}/metrics`)).text()
  expect(text).toContain('switchyard_requests_total{surface="gemini",model="demo/echo",status="400"} 1')
  expect(text).toContain('switchyard_requests_total{surface="gemini",model="",status="400"} 1')
})

/**
 * The counting, embedding and compaction endpoints label a refusal of the body likewise (stop 65
 * left them at `model=""`). Each is asked once with a known model and once with an unknown one.
 */
test.each([
  ['messages', '/v1/messages/count_tokens', 'demo/echo', (model: string) => ({ model, messages: 5 })],
  ['responses', '/v1/responses/input_tokens', 'demo/echo', (model: string) => ({ model, input: 5 })],
  ['responses', '/v1/responses/compact', 'demo/echo', (model: string) => ({ model, input: 5 })],
  ['embeddings', '/v1/embeddings', 'demo/embed', (model: string) => ({ model, input: {} })],
] as const)(
  '%s %s: a 400 in the body is counted and logged under a known model',
  async (surface, path, model, body) => {
    const before = await (await fetch(`${gw.url}/metrics`)).text()
    const count = (text: string, m: string) => Number(text.match(metricLine(surface, m))?.[1] ?? 0)
    expect((await json(path, body(model))).status).toBe(400)
    expect((await json(path, body('nope/never'))).status).toBe(400)
    const after = await (await fetch(`${gw.url}/metrics`)).text()
    expect(count(after, model) - count(before, model)).toBe(1)
    expect(count(after, '') - count(before, '')).toBe(1)
    expect(after).not.toContain('nope/never')
    const access = gw.logs.filter((l) => l.includes(`"path":"${path}"`) && l.includes('"status":400'))
    expect(access.some((l) => l.includes(`"model":"${model}"`))).toBe(true)
  },
)

test.each([
  ['countTokens', 'demo/echo', { contents: 5 }],
  ['embedContent', 'demo/embed', { content: 5 }],
  ['batchEmbedContents', 'demo/embed', { requests: 5 }],
] as const)(
  'gemini :%s: a 400 in the body is counted under the model its path names',
  async (method, model, body) => {
    const before = await (await fetch(`${gw.url}/metrics`)).text()
    const count = (text: string, m: string) => Number(text.match(metricLine('gemini', m))?.[1] ?? 0)
    expect((await json(`/v1beta/models/${model}:${method}`, body)).status).toBe(400)
    expect((await json(`/v1beta/models/nope/never:${method}`, body)).status).toBe(400)
    const after = await (await fetch(`${gw.url}/metrics`)).text()
    expect(count(after, model) - count(before, model)).toBe(1)
    expect(count(after, '') - count(before, '')).toBe(1)
  },
)

const metricLine = (surface: string, model: string) =>
  new RegExp(
    `switchyard_requests_total\\{surface="${surface}",model="${model.replace('/', '\\/')}",status="400"\\} (\\d+)`,
  )
