/**
 * The admin guard on a real server: every admin route, read from the app itself, refuses callers
 * without the admin token however the request is shaped (bad Host, short Host, any body).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { createApp } from '../../../src/app/app.ts'
import { adminGuard } from '../../../src/server/admin-guard.ts'
import { errorHandling } from '../../../src/server/errors.ts'
import { silentLogger } from '../../../src/util/log.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'
import { rawRequest } from '../../support/raw-http.ts'

/** Routes anyone may call. Any other route must refuse a caller without credentials. */
const PUBLIC = new Set([
  'GET /healthz',
  'GET /metrics',
  // The console's sign-in takes its credential (admin token or API key) in the body; signing out
  // ends whatever session the caller holds, if any.
  'POST /console/session',
  'DELETE /console/session',
  'POST /console/me/session',
  'DELETE /console/me/session',
  // The console's pages and their script and style files: the same for everyone, no data in them.
  'GET /console',
  'GET /console/me',
  'GET /console/assets/:name',
])

let gw: TestGateway
let port: number
let routes: Array<{ method: string; path: string; template: string }>
let adminRoutes: typeof routes

beforeAll(async () => {
  gw = await startGateway()
  port = Number(new URL(gw.url).port)
  routes = createApp(gw.deps).routes.map((r) => ({
    method: r.method === 'ALL' ? 'GET' : r.method,
    template: r.path,
    path: r.path.replace(/:[^/]+/g, 'x').replace(/\*$/, 'x'),
  }))
  adminRoutes = routes.filter((r) => r.template.startsWith('/admin/'))
})
afterAll(() => gw.stop())

const BAD_HOSTS: Array<[string, (method: string, path: string) => string]> = [
  ['Host: a/b', (m, p) => `${m} ${p} HTTP/1.1\r\nHost: a/b\r\n`],
  ['empty Host', (m, p) => `${m} ${p} HTTP/1.1\r\nHost: \r\n`],
  ['HTTP/1.0 without Host', (m, p) => `${m} ${p} HTTP/1.0\r\n`],
  ['Host: a?', (m, p) => `${m} ${p} HTTP/1.1\r\nHost: a?\r\n`],
  ['Host: a@b', (m, p) => `${m} ${p} HTTP/1.1\r\nHost: a@b\r\n`],
  ['Host: a#b', (m, p) => `${m} ${p} HTTP/1.1\r\nHost: a#b\r\n`],
  ['two Hosts', (m, p) => `${m} ${p} HTTP/1.1\r\nHost: ok\r\nHost: other\r\n`],
]

function raw(head: string, extra: string[] = [], body = '') {
  const headers = [...extra, 'Connection: close']
  if (body || !head.startsWith('GET'))
    headers.push('Content-Type: application/json', `Content-Length: ${body.length}`)
  return rawRequest(port, `${head}${headers.map((h) => `${h}\r\n`).join('')}\r\n${body}`)
}

describe('admin guard', () => {
  test('the app has admin routes to check', () => {
    expect(adminRoutes.length).toBeGreaterThanOrEqual(16)
  })

  test('every route but /healthz and /metrics refuses a caller without credentials', async () => {
    const wrong: string[] = []
    for (const r of routes) {
      if (PUBLIC.has(`${r.method} ${r.template}`)) continue
      const res = await fetch(`${gw.url}${r.path}`, {
        method: r.method,
        headers: r.method === 'GET' ? {} : { 'content-type': 'application/json' },
        body: r.method === 'GET' ? undefined : '{}',
      })
      const code = ((await res.json()) as any).error?.code
      if (res.status !== 401 || (r.template.startsWith('/admin/') && code !== 'invalid_admin_token')) {
        wrong.push(`${r.method} ${r.template} → ${res.status} ${code}`)
      }
    }
    expect(wrong).toEqual([])
  })

  test('every admin route with a bad Host: 400 or 401 without the token, 400 with it', async () => {
    const wrong: string[] = []
    let checked = 0
    for (const r of adminRoutes) {
      for (const [name, head] of BAD_HOSTS) {
        const route = `${r.method} ${r.template} with ${name}`
        const body = r.method === 'GET' ? '' : '{"name":"x","account":"x","plan":"free"}'
        const anon = await raw(head(r.method, r.path), [], body)
        if (anon.status !== 400 && anon.status !== 401) wrong.push(`${route}, no token → ${anon.status}`)
        const admin = await raw(head(r.method, r.path), [`Authorization: Bearer ${ADMIN_TOKEN}`], body)
        const code = admin.status ? JSON.parse(admin.body).error?.code : undefined
        if (admin.status !== 400 || code !== 'invalid_host' || !admin.headers['x-request-id']) {
          wrong.push(`${route}, token → ${admin.status} ${code}`)
        }
        checked++
      }
    }
    expect(wrong).toEqual([])
    expect(checked).toBe(adminRoutes.length * BAD_HOSTS.length)
  })

  test('a short Host cannot move the routed path into the admin API', async () => {
    // Elysia found the path at index 11 of request.url: with `Host: a`, `/xx/admin/v1/accounts`
    // was routed as `/admin/v1/accounts` while the old URL check saw `/xx/...`.
    await gw.key('shorthost', 'free')
    for (const r of adminRoutes) {
      for (const host of ['a', 'ab', 'abc']) {
        const res = await raw(`${r.method} /${'x'.repeat(4 - host.length)}${r.path} HTTP/1.1\r\n`, [
          `Host: ${host}`,
        ])
        expect({ route: `${r.method} ${r.template} ${host}`, status: res.status }).toMatchObject({
          status: 404,
        })
      }
    }
    const ok = await raw('GET /admin/v1/accounts HTTP/1.1\r\n', [
      'Host: a',
      `Authorization: Bearer ${ADMIN_TOKEN}`,
    ])
    expect(ok.status).toBe(200)
    expect(JSON.parse(ok.body).data.map((a: { name: string }) => a.name)).toContain('shorthost')
  })

  test('a bad Host is refused on every route, not only admin ones', async () => {
    for (const path of ['/healthz', '/metrics', '/v1/models', '/nope']) {
      const res = await raw(`GET ${path} HTTP/1.1\r\n`, ['Host: a/b'])
      expect(res.status).toBe(400)
      expect(JSON.parse(res.body).error).toMatchObject({
        code: 'invalid_host',
        type: 'invalid_request_error',
      })
    }
    const good = await raw('GET /healthz HTTP/1.0\r\n', ['Host: gateway.internal:8080'])
    expect(good.status).toBe(200)
    const v6 = await raw('GET /healthz HTTP/1.1\r\n', ['Host: [::1]:8080'])
    expect(v6.status).toBe(200)
  })

  test('a caller without the token gets 401 whatever the body; with it, body errors are 400', async () => {
    const bodies = ['{bad', '{"name":5}', '{"extra":true}', 'x'.repeat(1_000_000), '[[[[[[[[[[']
    const posts = adminRoutes.filter((r) => r.method === 'POST')
    for (const r of posts) {
      for (const body of bodies) {
        for (const ct of ['application/json', 'application/x-www-form-urlencoded', 'text/plain']) {
          const res = await fetch(`${gw.url}${r.path}`, {
            method: 'POST',
            headers: { 'content-type': ct },
            body,
          })
          expect({ route: r.template, status: res.status }).toEqual({ route: r.template, status: 401 })
        }
      }
    }
    const admin = { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' }
    const bad = await fetch(`${gw.url}/admin/v1/accounts`, { method: 'POST', headers: admin, body: '{bad' })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as any).error.code).toBe('invalid_json')
    const query = await fetch(`${gw.url}/admin/v1/keys?account=nobody`, { headers: { 'x-q': '1' } })
    expect(query.status).toBe(401)
  })

  test('HEAD on the admin GET routes is guarded too', async () => {
    for (const r of adminRoutes.filter((x) => x.method === 'GET')) {
      const res = await raw(`HEAD ${r.path} HTTP/1.1\r\n`, ['Host: ok'])
      expect([r.template, res.status]).toEqual([r.template, 401])
    }
  })

  // Locks 127.0.0.1 out of the admin API for a minute: keep it after the tests that use the token.
  test('a user key is refused on every admin route: 403, then 429 once it counts as guessing', async () => {
    const { key } = await gw.key('userkey', 'free')
    const statuses: number[] = []
    for (const r of adminRoutes) {
      statuses.push((await fetch(`${gw.url}${r.path}`, { method: r.method, headers: bearer(key) })).status)
    }
    expect(statuses.slice(0, 5)).toEqual([403, 403, 403, 403, 403])
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true)
  })

  test('any route group that uses the guard is guarded; routes outside it are not', async () => {
    const group = new Elysia({ prefix: '/console/api' })
      .use(adminGuard(gw.deps))
      .get('/state', () => ({ ok: true }))
      .post('/thing', ({ body }) => body)
    const app = new Elysia()
      .use(errorHandling(silentLogger))
      .use(group)
      .get('/after', () => 'open')
    const call = (path: string, init: RequestInit = {}) =>
      app.handle(new Request(`http://localhost${path}`, init))
    expect((await call('/console/api/state')).status).toBe(401)
    expect((await call('/console/api/thing', { method: 'POST', body: '{bad' })).status).toBe(401)
    expect((await call('/console/api/state', { headers: bearer(ADMIN_TOKEN) })).status).toBe(200)
    expect((await call('/after')).status).toBe(200)
  })
})
