/**
 * DNS rebinding: a page at http://evil.example:8080 whose name is made to resolve to 127.0.0.1 is
 * same-origin with a gateway listening there. Its requests carry `Host: evil.example:8080`; a
 * gateway on loopback answers only Hosts no public DNS name can stand for (IP literals, localhost,
 * single-label and special-use names) and those in `server.allowed_hosts`. Without that, such a
 * page read /metrics and guessed the admin token through the console's sign-in, which also locked
 * the operator (same address, 127.0.0.1) out of signing in.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../../src/app/app.ts'
import { buildDeps } from '../../../src/app/build.ts'
import { parseConfig } from '../../../src/config/index.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway, tempDir, testConfigDoc } from '../../support/gateway.ts'
import { rawRequest } from '../../support/raw-http.ts'

/** One request with exactly this Host over a real socket (fetch sets its own). */
async function asHost(gw: TestGateway, host: string, head: string, extra: string[] = [], body = '') {
  const port = Number(new URL(gw.url).port)
  const lines = [`Host: ${host}`, ...extra, 'Connection: close']
  if (body) lines.push('Content-Type: application/json', `Content-Length: ${body.length}`)
  return rawRequest(port, `${head} HTTP/1.1\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n${body}`)
}

describe('bound to 127.0.0.1, no server.allowed_hosts', () => {
  let gw: TestGateway
  let port: number
  beforeAll(async () => {
    gw = await startGateway()
    port = Number(new URL(gw.url).port)
  })
  afterAll(() => gw.stop())

  test('a public DNS name as Host is refused on every route: 403 host_not_allowed, with a request id', async () => {
    for (const host of [`evil.example.com:${port}`, 'rebind.attacker.net', `EVIL.example.com.:${port}`]) {
      for (const path of [
        '/healthz',
        '/metrics',
        '/console',
        '/console/me',
        '/v1/models',
        '/admin/v1/accounts',
      ]) {
        const res = await asHost(gw, host, `GET ${path}`)
        expect({ host, path, status: res.status }).toEqual({ host, path, status: 403 })
        expect(JSON.parse(res.body).error).toMatchObject({
          code: 'host_not_allowed',
          type: 'permission_error',
        })
        expect(JSON.parse(res.body).error.message).toContain('server.allowed_hosts')
        expect(res.headers['x-request-id']).toMatch(/^req_/)
      }
    }
  })

  test('a rebinding page cannot guess the admin token, nor lock the operator out by guessing', async () => {
    const host = `evil.example.com:${port}`
    for (let i = 0; i < 8; i++) {
      const res = await asHost(
        gw,
        host,
        'POST /console/session',
        [`Origin: http://${host}`],
        JSON.stringify({ token: `guess-${i}-0123456789-0123456789-0123456789` }),
      )
      expect(res.status).toBe(403)
    }
    // The operator, on the right host, signs in at once: the guesses never reached the throttle.
    const ok = await fetch(`${gw.url}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gw.url },
      body: JSON.stringify({ token: ADMIN_TOKEN }),
    })
    expect(ok.status).toBe(200)
  })

  test('loopback, IP, single-label and special-use names pass, whatever the port', async () => {
    const hosts = [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `[::1]:${port}`,
      'localhost:9000', // an ssh tunnel or a container's port mapping
      'app.localhost',
      '10.0.0.5:8080',
      '[fd00::1]',
      'switchyard:8080', // a container's service name
      'gateway.internal:8080',
      'box.local',
      'gw.test',
    ]
    for (const host of hosts) {
      const res = await asHost(gw, host, 'GET /healthz')
      expect({ host, status: res.status }).toEqual({ host, status: 200 })
    }
  })
})

describe('server.allowed_hosts', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startGateway({
      doc: testConfigDoc({
        server: { host: '127.0.0.1', port: 0, allowed_hosts: ['gw.example.com', '*.corp.acme.dev'] },
      }),
    })
  })
  afterAll(() => gw.stop())

  test('names listed (exactly, or under a *. wildcard) pass; other public names are refused', async () => {
    const expected: Record<string, number> = {
      'gw.example.com': 200,
      'GW.Example.com:443': 200,
      'a.corp.acme.dev': 200,
      'a.b.corp.acme.dev': 200,
      'corp.acme.dev': 403,
      'evil.example.com': 403,
      'gw.example.com.evil.net': 403,
      'localhost:8080': 200,
      '127.0.0.1': 200,
    }
    const seen: Record<string, number> = {}
    for (const host of Object.keys(expected)) seen[host] = (await asHost(gw, host, 'GET /healthz')).status
    expect(seen).toEqual(expected)
  })
})

describe('the default elsewhere, and "*"', () => {
  const appFor = (server: Record<string, unknown>) => {
    const dir = tempDir()
    const config = parseConfig(
      testConfigDoc({ server: { port: 0, ...server }, database: { path: `${dir}/db.sqlite` } }),
      'test',
    )
    return createApp(buildDeps(config))
  }
  const status = async (app: ReturnType<typeof createApp>, host: string) =>
    (await app.handle(new Request('http://gateway/healthz', { headers: { host } }))).status

  test('bound to every interface, a gateway reached by its public name answers any Host', async () => {
    expect(await status(appFor({ host: '0.0.0.0' }), 'gw.example.com')).toBe(200)
  })

  test('bound to every interface with a list, only listed and non-public names pass', async () => {
    const app = appFor({ host: '0.0.0.0', allowed_hosts: ['gw.example.com'] })
    expect(await status(app, 'gw.example.com')).toBe(200)
    expect(await status(app, 'evil.example.com')).toBe(403)
  })

  test('"*" turns the check off on loopback; "localhost" as the listen host counts as loopback', async () => {
    expect(await status(appFor({ host: '127.0.0.1', allowed_hosts: ['*'] }), 'evil.example.com')).toBe(200)
    expect(await status(appFor({ host: 'localhost' }), 'evil.example.com')).toBe(403)
    expect(await status(appFor({ host: '::1' }), 'evil.example.com')).toBe(403)
  })
})

test('config: an allowed_hosts entry with a scheme, a port or a path is an error naming it', () => {
  for (const bad of [
    'https://gw.example.com',
    'gw.example.com:8080',
    'gw.example.com/x',
    '*example.com',
    '',
  ]) {
    expect(() => parseConfig(testConfigDoc({ server: { allowed_hosts: [bad] } }), 'test')).toThrow(
      /\/server\/allowed_hosts\/0/,
    )
  }
})
