/**
 * A chat request is exempt from the socket idle timeout only while it runs: afterwards the
 * pooled keep-alive connection must close at `server.idle_timeout_s` like any other.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const IDLE_S = 2
let gw: TestGateway
let key: string

beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({ server: { host: '127.0.0.1', port: 0, idle_timeout_s: IDLE_S } }),
  })
  key = (await gw.key('idle', 'unlimited')).key
})
afterAll(() => gw.stop())

/**
 * Sends a keep-alive request on a raw socket, reads the whole response, sends the same request
 * again at once on the same socket (a connection closed with the first answer gets no second
 * one), reads that, then reports how long after it the server closed the connection (null if it
 * was still open at `waitMs`).
 */
function keepAliveThenIdle(
  body: string,
  waitMs: number,
): Promise<{ responses: string[]; closedAfterMs: number | null }> {
  const { port } = new URL(gw.url)
  const request =
    `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n` +
    `Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), '127.0.0.1')
    const responses = ['']
    let doneAt = 0
    let giveUp: ReturnType<typeof setTimeout> | undefined
    const complete = (r: string) => r.includes('data: [DONE]') || /\r\n\r\n\{.*\}$/s.test(r)
    sock.on('data', (d) => {
      responses[responses.length - 1] += d.toString()
      if (doneAt || !complete(responses.at(-1)!)) return
      if (responses.length === 1) {
        responses.push('')
        sock.write(request)
        return
      }
      doneAt = performance.now()
      giveUp = setTimeout(() => {
        sock.destroy()
        resolve({ responses, closedAfterMs: null })
      }, waitMs)
    })
    sock.on('close', () => {
      clearTimeout(giveUp)
      resolve({ responses, closedAfterMs: doneAt ? performance.now() - doneAt : -1 })
    })
    sock.on('error', reject)
    sock.write(request)
  })
}

describe('keep-alive connection after a chat request', () => {
  // uSockets checks timeouts on a tick of a few seconds, so the close comes anywhere from just
  // after the second answer to a few seconds past IDLE_S (seen: 380 ms); without the fix it never
  // comes (the chat exemption stuck to the socket). That the connection was kept alive at all is
  // the second answer on it, not a time. The two wait on their own connections for the same
  // tick, idle: concurrently.
  const WAIT_MS = IDLE_S * 1000 + 10_000

  test.concurrent('non-stream: the connection closes at the idle timeout', async () => {
    const body = JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] })
    const r = await keepAliveThenIdle(body, WAIT_MS)
    expect(r.responses.map((x) => x.slice(0, 15))).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK'])
    expect(r.closedAfterMs).not.toBeNull()
    expect(r.closedAfterMs!).toBeGreaterThanOrEqual(0)
  }, 30_000)

  test.concurrent('stream: the connection closes at the idle timeout', async () => {
    const body = JSON.stringify({
      model: 'demo/echo',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    })
    const r = await keepAliveThenIdle(body, WAIT_MS)
    expect(r.responses.map((x) => x.slice(0, 15))).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK'])
    expect(r.closedAfterMs).not.toBeNull()
    expect(r.closedAfterMs!).toBeGreaterThanOrEqual(0)
  }, 30_000)
})
