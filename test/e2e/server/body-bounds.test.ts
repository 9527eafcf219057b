/**
 * Every route that reads a body bounds it before reading past the bound (issue 31, finding 1).
 * The server sets no limit of its own (Bun's would answer with a bare 413), and the console's
 * sign-in routes read bodies of any size without authentication: 400 MB took the process from
 * 77 MB to 860 MB and answered 500. Read from the app itself, so a route added later is checked
 * too: a body declared over the bound is refused at once, a chunked body that keeps coming and
 * then stalls is refused without waiting for its end — an unbounded read would stall with it —,
 * and a body that stops arriving gets 408 at `server.body_timeout_s`.
 * Real sockets, so nothing in between buffers the body.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../../src/app/app.ts'
import { ADMIN_BODY_MAX, SIGN_IN_BODY_MAX } from '../../../src/server/json-body.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { type RawResponse, sendAndHold } from '../../support/raw-http.ts'

const MODEL_BODY_MAX = 256 * 1024
/** More than every bound: a route still reading past it is reading without one. */
const SENT = 1024 * 1024

let gw: TestGateway
let port: number
let key: string
let routes: Array<{ method: string; path: string }>
beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      server: { host: '127.0.0.1', port: 0, body_limit_bytes: MODEL_BODY_MAX, body_timeout_s: 1 },
    }),
  })
  port = Number(new URL(gw.url).port)
  key = (await gw.key('bounds', 'unlimited')).key
  routes = createApp(gw.deps)
    .routes.filter((r) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method))
    // Gemini's routes end in a wildcard holding the model and the method: a real pair of them.
    .map((r) => ({
      method: r.method,
      path: r.path.replace(/:[^/]+/g, 'x').replace(/\*$/, 'demo/echo:generateContent'),
    }))
})
afterAll(() => gw.stop())

/** The credentials each route group wants, so the body is what the route answers about. */
function credentials(path: string): string[] {
  if (path.startsWith('/admin/')) return [`Authorization: Bearer ${ADMIN_TOKEN}`]
  if (path.startsWith('/console/')) return [`Origin: http://127.0.0.1:${port}`]
  return [`Authorization: Bearer ${key}`]
}

function boundOf(path: string): number {
  if (path.startsWith('/admin/')) return ADMIN_BODY_MAX
  if (path.startsWith('/console/')) return SIGN_IN_BODY_MAX
  return MODEL_BODY_MAX
}

const head = (method: string, path: string, extra: string[]) =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n${[...credentials(path), ...extra].map((h) => `${h}\r\n`).join('')}\r\n`

/** `{"pad":"xxx…` in HTTP chunks of 16 KiB, `total` bytes in all, never finished. */
function endless(total: number): Uint8Array[] {
  const enc = new TextEncoder()
  const out: Uint8Array[] = [enc.encode(`9\r\n{"pad":"x\r\n`)]
  const piece = 'x'.repeat(16 * 1024)
  for (let sent = 9; sent < total; sent += piece.length) {
    out.push(enc.encode(`${piece.length.toString(16)}\r\n${piece}\r\n`))
  }
  return out
}

/**
 * The surface's own shape: OpenAI's `error.code`, Anthropic's `error.type` on /v1/messages, or on
 * Gemini's routes Google's `ErrorInfo` detail's `reason`.
 */
function expect413(route: string, r: RawResponse, bound: number) {
  const error = r.status ? JSON.parse(r.body).error : null
  const code = error?.details?.[0]?.reason ?? error?.code ?? error?.type
  expect({ route, status: r.status, code }).toEqual({
    route,
    status: 413,
    code: 'request_too_large',
  })
  expect(error.message).toContain(String(bound))
  expect(r.headers['x-request-id']).toBeTruthy()
}

describe('every route that reads a body bounds it', () => {
  test('the app has the body routes to check: model surfaces, admin API, console sign-in and out', () => {
    const paths = routes.map((r) => r.path)
    expect(paths).toContain('/v1/chat/completions')
    expect(paths).toContain('/admin/v1/accounts')
    expect(paths).toContain('/console/me/session')
    expect(routes.length).toBeGreaterThanOrEqual(20)
  })

  test('a body declared over the bound → 413 in the route’s error shape, before any of it is sent', async () => {
    for (const r of routes) {
      const bound = boundOf(r.path)
      const res = await sendAndHold(port, head(r.method, r.path, [`Content-Length: ${bound + 1}`]), [])
      expect413(`${r.method} ${r.path}`, res, bound)
    }
  })

  test('a chunked body that keeps coming → 413 once past the bound, without waiting for its end', async () => {
    for (const r of routes) {
      const res = await sendAndHold(
        port,
        head(r.method, r.path, ['Transfer-Encoding: chunked']),
        endless(SENT),
      )
      expect413(`${r.method} ${r.path}`, res, boundOf(r.path))
    }
  })

  test('a body that stops arriving → 408 at server.body_timeout_s, not a held request', async () => {
    // All at once: each waits out the 1 s deadline.
    const answers = await Promise.all(
      routes.map(async (r) => {
        const res = await sendAndHold(port, head(r.method, r.path, ['Content-Length: 100']), [
          new TextEncoder().encode('{"name":'),
        ])
        return { route: `${r.method} ${r.path}`, status: res.status, late: res.ms > 4_000 }
      }),
    )
    expect(answers).toEqual(routes.map((r) => ({ route: `${r.method} ${r.path}`, status: 408, late: false })))
  })

  test('400 MB declared to a sign-in route: 413 at once, the server never reads it', async () => {
    for (const path of ['/console/session', '/console/me/session']) {
      const res = await sendAndHold(port, head('POST', path, [`Content-Length: ${400 * 1024 * 1024}`]), [])
      expect413(path, res, SIGN_IN_BODY_MAX)
      expect(res.ms).toBeLessThan(2_000)
    }
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200)
  })
})
