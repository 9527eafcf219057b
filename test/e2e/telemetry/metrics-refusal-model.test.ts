/**
 * A request refused for what its body holds is counted under its model when the model is one the
 * gateway knows (audit 65a: a `/v1/messages` 400 "max_tokens is required" for demo/echo was
 * counted under `model=""`, while chat's refusals after routing were under the model). A model no
 * catalogue entry names stays `""`: a label takes only the catalogue's ids, whatever is sent.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

let gw: TestGateway
let key: string
beforeAll(async () => {
  gw = await startGateway()
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
