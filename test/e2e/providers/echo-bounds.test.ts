/**
 * A refusal that quotes what was sent quotes at most 100 characters of it: the reply never grows
 * with the URL or header that carried the value (up to Bun's 16 KiB), as the account and key
 * refusals already cut theirs.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

let gw: TestGateway
let key: string
const LONG = 'a'.repeat(12_000)

beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({ server: { host: '127.0.0.1', port: 0, cors_origins: ['https://app.example'] } }),
  })
  key = (await gw.key('echo', 'pro')).key
})
afterAll(() => gw.stop())

async function refusal(path: string, init: RequestInit) {
  const res = await fetch(`${gw.url}${path}`, init)
  const body = (await res.json()) as { error: { code: string; message: string } }
  return { status: res.status, code: body.error.code, length: body.error.message.length }
}

test('GET /v1/models/<long id>: 404 quoting a clipped id', async () => {
  const r = await refusal(`/v1/models/demo/${LONG}`, { headers: bearer(key) })
  expect(r).toMatchObject({ status: 404, code: 'model_not_found' })
  expect(r.length).toBeLessThan(300)
})

test('DELETE /admin/v1/sessions/<long id>: 400 quoting a clipped id', async () => {
  const r = await refusal(`/admin/v1/sessions/${LONG}`, { method: 'DELETE', headers: bearer(ADMIN_TOKEN) })
  expect(r).toMatchObject({ status: 400, code: 'invalid_value' })
  expect(r.length).toBeLessThan(300)
})

test('a preflight from a long origin not listed: 403 quoting a clipped origin', async () => {
  const r = await refusal('/v1/chat/completions', {
    method: 'OPTIONS',
    headers: { origin: `https://${LONG}.example`, 'access-control-request-method': 'POST' },
  })
  expect(r).toMatchObject({ status: 403, code: 'cors_origin_not_allowed' })
  expect(r.length).toBeLessThan(300)
})
