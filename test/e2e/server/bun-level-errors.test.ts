/**
 * Requests Bun's HTTP parser refuses never reach the app: Bun answers them itself, below
 * JavaScript (Bun.serve's `error` hook is not called), with a bare status, no OpenAI error body
 * and no request id. This pins that boundary, documented in the README; if Bun ever hands these
 * to the app, this fails and the README needs changing.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type TestGateway } from '../../support/gateway.ts'
import { rawRequest } from '../../support/raw-http.ts'

let gw: TestGateway
let port: number
beforeAll(async () => {
  gw = await startGateway()
  port = Number(new URL(gw.url).port)
})
afterAll(() => gw.stop())

test('malformed request lines and oversized headers get a bare 400 / 431 from Bun; the app sees nothing', async () => {
  const before = await (await fetch(`${gw.url}/metrics`)).text()
  const cases: Array<[string, string, number]> = [
    ['request line', 'GET * HTTP/1.1\r\nHost: a\r\n\r\n', 400],
    ['garbage', 'HELLO\r\n\r\n', 400],
    ['header line', 'GET /healthz HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n', 400],
    ['HTTP/1.1 without Host', 'GET /healthz HTTP/1.1\r\n\r\n', 400],
    ['headers over 16 KiB', `GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`, 431],
  ]
  for (const [name, bytes, status] of cases) {
    const res = await rawRequest(port, bytes)
    expect([name, res.status, res.body, res.headers['x-request-id']]).toEqual([name, status, '', undefined])
  }
  const after = await (await fetch(`${gw.url}/metrics`)).text()
  const errors = (m: string) => m.split('\n').filter((l) => /status="4\d\d"/.test(l))
  expect(errors(after)).toEqual(errors(before))
})
