/**
 * A key sent as `x-request-id` (a client that put its key in the wrong header) is not kept: the
 * request gets the gateway's own `req_…` id, so the key is neither echoed in the response header
 * nor stored in the request log, where the admin API and the console would show it whole.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

let gw: TestGateway
let key: string

beforeAll(async () => {
  gw = await startGateway()
  key = (await gw.key('rid', 'pro')).key
})
afterAll(() => gw.stop())

test('a key as x-request-id is replaced by a req_ id: not echoed, not in the request log', async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'x-request-id': key, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
  })
  expect(res.status).toBe(200)
  expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/)
  await gw.deps.recorder.flush()
  const log = await fetch(`${gw.url}/admin/v1/requests`, { headers: bearer(ADMIN_TOKEN) })
  const text = await log.text()
  expect(text).toContain('"surface":"chat"')
  expect(text).not.toContain(key)
})

test('a sane x-request-id is still kept', async () => {
  const res = await fetch(`${gw.url}/v1/models`, {
    headers: { ...bearer(key), 'x-request-id': 'trace-1234' },
  })
  expect(res.headers.get('x-request-id')).toBe('trace-1234')
})
