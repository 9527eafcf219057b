/**
 * Any answer sent before the request's body was read (DESIGN §16) — a refusal, or a route that
 * takes no body — closes the connection (`Connection: close`), not held for a body nobody will
 * read. Bun answers, then discards the
 * body's bytes as they come and keeps the socket until they end — with none coming, until its idle
 * timeout, or never once a route has exempted the request from it: 2,000 unauthenticated clients
 * sending `Content-Length: 100000` and 5 bytes held 2,020 of the gateway's fds after 125 s.
 * An answer after the whole body was read, refusal or not, keeps the connection for the next
 * request.
 * Real sockets (node:net); the body timeout is set far past the test's wait.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { ADMIN_TOKEN, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { parseResponse } from '../../support/raw-http.ts'

let gw: TestGateway
let key: string
beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({ server: { host: '127.0.0.1', port: 0, body_timeout_s: 60 } }),
  })
  key = (await gw.key('early', 'unlimited')).key
})
afterAll(() => gw.stop())

interface Held {
  status: number
  connection: string | null
  /** Whether the server closed the connection within the wait after its answer. */
  closed: boolean
  /** A second request's status on the same connection (0 when none was sent or none came). */
  next: number
}

/**
 * Writes `bytes` and holds the socket; after the first answer waits `waitMs` for the server to
 * close it, and with `then` sends that on the same connection and reads its answer.
 */
function hold(bytes: string, then?: string, waitMs = 2_000): Promise<Held> {
  return new Promise((resolve) => {
    let text = ''
    let answered: ReturnType<typeof parseResponse> | null = null
    let closed = false
    const socket = connect(Number(new URL(gw.url).port), '127.0.0.1', () => socket.write(bytes))
    const finish = () => {
      clearTimeout(timer)
      socket.destroy()
      const second = answered ? parseResponse(text) : null
      resolve({
        status: answered?.status ?? 0,
        connection: answered?.headers.connection ?? null,
        closed,
        next: then ? (second?.status ?? 0) : 0,
      })
    }
    let timer = setTimeout(finish, waitMs + 5_000)
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1')
      if (answered) return
      const r = parseResponse(text)
      const length = Number(r.headers['content-length'] ?? Number.NaN)
      if (r.status === 0 || r.body.length < length) return
      answered = r
      text = ''
      if (then) socket.write(then)
      clearTimeout(timer)
      timer = setTimeout(finish, waitMs)
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      closed = true
      finish()
    })
  })
}

const PARTIAL = 'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"mod'
const post = (path: string, headers = '') => `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}`

describe('answered before the body was read: Connection: close, the socket let go', () => {
  const CASES: Array<[string, string, number]> = [
    ['no key on /v1/chat/completions', post('/v1/chat/completions') + PARTIAL, 401],
    ['no key on /v1/messages', post('/v1/messages') + PARTIAL, 401],
    ['no key on Gemini generateContent', post('/v1beta/models/demo/echo:generateContent') + PARTIAL, 401],
    [
      'a route that takes no body: GET /healthz (200)',
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${PARTIAL}`,
      200,
    ],
    ['a page: GET /console/me (200)', `GET /console/me HTTP/1.1\r\nHost: 127.0.0.1\r\n${PARTIAL}`, 200],
    ['an unknown route', post('/v1/nothing-here') + PARTIAL, 404],
    [
      'a wrong admin token',
      post('/admin/v1/accounts', 'Authorization: Bearer wrong-token\r\n') + PARTIAL,
      401,
    ],
    [
      'a declared body over the admin limit (64 KiB)',
      post('/admin/v1/accounts', `Authorization: Bearer ${ADMIN_TOKEN}\r\n`) + PARTIAL,
      413,
    ],
  ]
  for (const [name, bytes, status] of CASES) {
    test(name, async () => {
      const r = await hold(bytes)
      expect(r).toEqual({ status, connection: 'close', closed: true, next: 0 })
    })
  }

  test('a chunked body refused while it arrives (past the admin limit), the rest unsent', async () => {
    const piece = `{"name":"${'x'.repeat(70 * 1024)}`
    const head = post('/admin/v1/accounts', `Authorization: Bearer ${ADMIN_TOKEN}\r\n`)
    const r = await hold(
      `${head}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${piece.length.toString(16)}\r\n${piece}\r\n`,
    )
    expect(r).toEqual({ status: 413, connection: 'close', closed: true, next: 0 })
  })
})

describe('answered after the whole body was read: the connection stays for the next request', () => {
  const again = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`
  test('400 invalid_json', async () => {
    const body = '{"model": '
    const r = await hold(
      `${post('/v1/chat/completions', `Authorization: Bearer ${key}\r\n`)}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      again,
    )
    expect(r).toEqual({ status: 400, connection: null, closed: false, next: 200 })
  })
  test('404 for an unknown model', async () => {
    const body = JSON.stringify({ model: 'demo/none', messages: [{ role: 'user', content: 'hi' }] })
    const r = await hold(
      `${post('/v1/chat/completions', `Authorization: Bearer ${key}\r\n`)}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      again,
    )
    expect(r).toEqual({ status: 404, connection: null, closed: false, next: 200 })
  })
  test('200 for a chat request', async () => {
    const body = JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] })
    const r = await hold(
      `${post('/v1/chat/completions', `Authorization: Bearer ${key}\r\n`)}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      again,
    )
    expect(r).toEqual({ status: 200, connection: null, closed: false, next: 200 })
  })
  test('a bodiless GET refused (no key) keeps its connection too', async () => {
    const r = await hold(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, again)
    expect(r).toEqual({ status: 401, connection: null, closed: false, next: 200 })
  })
})
