/**
 * Issue 42: `/metrics` was open with no way to close it (its labels name the models accounts use
 * and providers' keys). `metrics: { token }` puts it behind a bearer token, as Prometheus sends one.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

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
