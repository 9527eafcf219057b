/**
 * Issue 42: `/metrics` was open with no way to close it (its labels name the models accounts use
 * and providers' keys). `metrics: { token }` puts it behind a bearer token, as Prometheus sends one.
 * Stop 65: wrong tokens were answered at full speed while wrong admin tokens were throttled; now
 * the same throttle counts both, per client address, and the right token always passes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_TOKEN, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const TOKEN = 'metrics-scrape-token-0123456789'
let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway({ doc: testConfigDoc({ metrics: { token: TOKEN } }) })
})
afterAll(() => gw?.stop())

const scrape = (headers: Record<string, string> = {}) => fetch(`${gw.url}/metrics`, { headers })

describe('metrics.token', () => {
  test('no token, a wrong one, or the right one as Basic auth: 401 invalid_metrics_token, nothing exported', async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer not-the-metrics-token' },
      { authorization: `Basic ${btoa(`x:${TOKEN}`)}` },
    ]
    for (const headers of cases) {
      const res = await scrape(headers)
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toContain('Bearer')
      expect(res.headers.get('x-request-id')).toBeTruthy()
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect(body.error.code).toBe('invalid_metrics_token')
      expect(body.error.message).not.toContain(TOKEN)
      // Without a header, the message says what to send (it said "not the metrics token").
      if (!headers.authorization) expect(body.error.message).toContain('needs the metrics token')
    }
  })

  test('the bearer token Prometheus sends gets the exposition', async () => {
    const res = await scrape({ authorization: `Bearer ${TOKEN}` })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/plain')
    expect(await res.text()).toContain('switchyard_processes')
  })

  test('/healthz stays open', async () => {
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200)
  })
})

test("wrong metrics tokens are throttled per address as the admin token's are (one throttle); the right token still passes", async () => {
  const own = await startGateway({ doc: testConfigDoc({ metrics: { token: TOKEN } }) })
  try {
    const get = (authorization?: string) =>
      fetch(`${own.url}/metrics`, { headers: authorization ? { authorization } : {} })
    // A missing header guesses nothing: not counted.
    for (let i = 0; i < 8; i++) expect((await get()).status).toBe(401)
    for (let i = 0; i < 5; i++) expect((await get(`Bearer wrong-${i}`)).status).toBe(401)
    const refused = await get('Bearer wrong-5')
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('metrics_auth_throttled')
    expect((await get(`Bearer ${TOKEN}`)).status).toBe(200)
    // One throttle: the address's wrong admin tokens are refused as throttled too, the right one passes.
    const admin = (token: string) =>
      fetch(`${own.url}/admin/v1/accounts`, { headers: { authorization: `Bearer ${token}` } })
    expect((await admin('not-the-admin-token')).status).toBe(429)
    expect((await admin(ADMIN_TOKEN)).status).toBe(200)
  } finally {
    await own.stop()
  }
})
