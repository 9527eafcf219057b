/**
 * `X-Content-Type-Options: nosniff` was on the console's pages only. The API's answers quote what
 * was sent (a model id, an origin, a name) and a browser that sniffs could read one loaded as a
 * script or a page as something other than the JSON it is; OpenAI's API sends `nosniff` on its
 * answers. Every answer of the gateway carries it now: JSON and streams, errors (those refused
 * before routing too), a preflight, /metrics, and the console's pages as before.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { rawRequest } from '../../support/raw-http.ts'

let gw: TestGateway
let key: string

beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      server: { host: '127.0.0.1', port: 0, cors_origins: ['https://app.example'] },
      admin: { token: ADMIN_TOKEN },
    }),
  })
  key = (await gw.key('sniff', 'pro')).key
})
afterAll(() => gw.stop())

const json = { 'content-type': 'application/json' }
const chat = (stream: boolean) =>
  JSON.stringify({ model: 'demo/echo', stream, messages: [{ role: 'user', content: 'hi' }] })

test('every kind of answer carries x-content-type-options: nosniff', async () => {
  const cases: Array<[string, string, RequestInit, number]> = [
    ['models', '/v1/models', { headers: bearer(key) }, 200],
    ['usage', '/v1/usage', { headers: bearer(key) }, 200],
    ['health', '/healthz', {}, 200],
    ['metrics', '/metrics', {}, 200],
    [
      'chat',
      '/v1/chat/completions',
      { method: 'POST', headers: { ...bearer(key), ...json }, body: chat(false) },
      200,
    ],
    [
      'chat stream',
      '/v1/chat/completions',
      { method: 'POST', headers: { ...bearer(key), ...json }, body: chat(true) },
      200,
    ],
    ['admin list', '/admin/v1/accounts', { headers: bearer(ADMIN_TOKEN) }, 200],
    ['no key', '/v1/models', {}, 401],
    ['unknown route', '/v1/nothing-here', { headers: bearer(key) }, 404],
    [
      'bad JSON',
      '/v1/chat/completions',
      { method: 'POST', headers: { ...bearer(key), ...json }, body: '{' },
      400,
    ],
    [
      'messages error',
      '/v1/messages',
      { method: 'POST', headers: { 'x-api-key': key, ...json }, body: '{}' },
      400,
    ],
    [
      'preflight',
      '/v1/chat/completions',
      {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      },
      204,
    ],
    [
      'preflight refused',
      '/v1/chat/completions',
      {
        method: 'OPTIONS',
        headers: { origin: 'https://other.example', 'access-control-request-method': 'POST' },
      },
      403,
    ],
    ['console page', '/console', {}, 200],
  ]
  for (const [what, path, init, status] of cases) {
    const res = await fetch(`${gw.url}${path}`, init)
    await res.arrayBuffer()
    expect({ what, status: res.status, nosniff: res.headers.get('x-content-type-options') }).toEqual({
      what,
      status,
      nosniff: 'nosniff',
    })
  }
})

test('an answer refused before routing (a Host the gateway does not answer to) carries it too', async () => {
  const port = Number(new URL(gw.url).port)
  const res = await rawRequest(
    port,
    'GET /v1/models HTTP/1.1\r\nHost: evil.example.com\r\nConnection: close\r\n\r\n',
  )
  expect(res.status).toBe(403)
  expect(res.headers['x-content-type-options']).toBe('nosniff')
})
