/**
 * Issue 22 finding 3: body reading has a deadline (`server.body_timeout_s`). A valid key could
 * hold 2,000 sockets for 30 s by trickling request bodies (admission comes after the body): now a
 * body that has not arrived in time gets 408 `request_timeout` and the socket is let go — declared
 * (Content-Length) or chunked, small or large. Real sockets, a byte at a time.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { parseResponse } from '../../support/raw-http.ts'

const TIMEOUT_S = 1
let gw: TestGateway
let key: string
beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({ server: { host: '127.0.0.1', port: 0, body_timeout_s: TIMEOUT_S } }),
  })
  key = (await gw.key('slow', 'unlimited')).key
})
afterAll(() => gw.stop())

interface Trickled {
  status: number
  code: string | null
  answeredMs: number
  /** When the server closed the connection; -1 if it still held it at the end. */
  closedMs: number
}

/** Sends the headers, then one of `pieces` every `gapMs`; stops sending once answered. */
function trickle(
  headers: string,
  pieces: string[],
  gapMs: number,
  waitMs = TIMEOUT_S * 1000 + 5_000,
): Promise<Trickled> {
  return new Promise((resolve) => {
    const started = performance.now()
    const chunks: Buffer[] = []
    let answeredMs = -1
    let sent = 0
    const socket = connect(Number(new URL(gw.url).port), '127.0.0.1', () => socket.write(headers))
    const timer = setInterval(() => {
      if (answeredMs >= 0 || sent >= pieces.length) return
      socket.write(pieces[sent++]!)
    }, gapMs)
    const done = (closedMs: number) => {
      clearInterval(timer)
      clearTimeout(giveUp)
      socket.destroy()
      const res = parseResponse(Buffer.concat(chunks).toString('latin1'))
      let code: string | null = null
      try {
        code = JSON.parse(res.body).error.code
      } catch {}
      resolve({ status: res.status, code, answeredMs, closedMs })
    }
    socket.on('data', (d: Buffer) => {
      chunks.push(d)
      if (answeredMs < 0) answeredMs = performance.now() - started
    })
    socket.on('error', () => {})
    socket.on('close', () => done(performance.now() - started))
    const giveUp = setTimeout(() => done(-1), waitMs)
  })
}

const BODY = JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'x'.repeat(200) }] })
const head = (extra: string) =>
  `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${extra}\r\n`

test.each([
  ['declared, small', () => head(`Content-Length: ${BODY.length}\r\n`)],
  ['declared, over the whole-read size', () => head(`Content-Length: ${300 * 1024}\r\n`)],
])(
  'a trickled body (%s) → 408 request_timeout at the deadline, connection closed',
  async (_, headers) => {
    const r = await trickle(headers(), BODY.split(''), 100)
    expect({ status: r.status, code: r.code }).toEqual({ status: 408, code: 'request_timeout' })
    expect(r.answeredMs).toBeGreaterThan(TIMEOUT_S * 1000 - 100)
    // At the deadline, counted from the start (a deadline a piece renews never comes: the whole
    // body takes ~28 s): 4 s of room for a loaded machine, short of trickle's 5 s give-up.
    expect(r.answeredMs).toBeLessThan(TIMEOUT_S * 1000 + 4_000)
    expect(r.closedMs).toBeGreaterThan(0)
  },
  15_000,
)

test('a trickled chunked body → 408 at the deadline, though a piece arrives every 100 ms', async () => {
  // One chunk (a byte of JSON) every 100 ms: each read is quick, the whole body is not.
  const pieces = BODY.split('').map((c) => `1\r\n${c}\r\n`)
  const r = await trickle(head('Transfer-Encoding: chunked\r\n'), pieces, 100)
  expect({ status: r.status, code: r.code }).toEqual({ status: 408, code: 'request_timeout' })
  expect(r.answeredMs).toBeLessThan(TIMEOUT_S * 1000 + 4_000)
  expect(r.closedMs).toBeGreaterThan(0)
}, 15_000)

test('a body sent at once is unaffected', async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: BODY,
  })
  expect(res.status).toBe(200)
})
