/**
 * Issue 42: an HTTP/1.1 client that pipelines (a POST and a GET written at once on one connection)
 * gets no response at all, and the POST is recorded as 499. The cause is Bun's HTTP server, below
 * the app: uWS closes the socket when it parses a request head while the response before it is
 * still pending (any handler that awaits), discarding that response and never dispatching the
 * next request (oven-sh/bun pull requests 32868, 33664, 35036, 38128; still so in Bun 1.4.4). The
 * app never sees the second request, so it can neither answer it in order nor refuse it.
 *
 * `test.failing` holds the contract until Bun answers in order: it passes while the requests go
 * unanswered and fails (asking to be made a plain test) once a Bun upgrade answers both. What the
 * gateway does meanwhile is checked below it: a request sent alone on the next connection is served.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { bearer, startGateway, type TestGateway } from '../../support/gateway.ts'
import { rawRequest } from '../../support/raw-http.ts'

let gw: TestGateway
let port: number
let key: string
beforeAll(async () => {
  gw = await startGateway()
  port = Number(new URL(gw.url).port)
  key = (await gw.key('pipeliner', 'free')).key
})
afterAll(() => gw?.stop())

const body = JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] })
const post = () =>
  `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
const get = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'

test.failing('a POST and a GET pipelined on one connection are answered in order', async () => {
  const res = await rawRequest(port, post() + get, 3_000)
  expect(res.status).toBe(200)
  expect(res.body).toContain('chat.completion')
})

test('the same requests each on their own connection are answered', async () => {
  const chat = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body,
  })
  expect(chat.status).toBe(200)
  expect((await rawRequest(port, get)).status).toBe(200)
})
