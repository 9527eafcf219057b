/**
 * What a hostile client can make the gateway write to its log: a very long path is clipped in the
 * access line (and in an admin audit line) to `PATH_SHOWN` characters and a marker, the query
 * string never reaches a line (a key or a provider secret in it stays out), and a key that the clip
 * would have cut in two is masked before it is cut — cut first, its head (up to 31 secret
 * characters) no longer looked like a key and was written as it was.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { PATH_SHOWN } from '../../../src/util/log.ts'
import { ADMIN_TOKEN } from '../../support/config-doc.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway({ doc: testConfigDoc({ admin: { token: ADMIN_TOKEN } }) })
})
afterAll(() => gw.stop())

/**
 * The lines written for the request the client sent with this x-request-id (after the logger's
 * batch has left): the client's id is `client_request_id` beside the gateway's own (issue 42).
 */
async function linesOf(id: string): Promise<Array<Record<string, unknown>>> {
  await Bun.sleep(20)
  return gw.logs.map((l) => JSON.parse(l)).filter((l) => l.client_request_id === id)
}

/** A fresh, real key's secret: the one thing no line may hold past its display prefix. */
const secretKey = async () => (await gw.key('bounds', 'free')).key

test('a 12 KB path is clipped in the access line, with a marker; the query is not logged', async () => {
  const key = await secretKey()
  const path = `/v1/${'x'.repeat(12_000)}`
  const res = await fetch(`${gw.url}${path}?api_key=${key}&token=provider-secret-123`, {
    headers: { 'x-request-id': 'long-path-1' },
  })
  expect(res.status).toBe(404)
  const [access] = (await linesOf('long-path-1')).filter((l) => l.msg === 'access')
  const logged = String(access!.path)
  expect(logged.length).toBe(PATH_SHOWN + 1)
  expect(logged).toBe(`${path.slice(0, PATH_SHOWN)}…`)
  const all = gw.logs.join('')
  expect(all).not.toContain(key.slice(0, 16))
  expect(all).not.toContain('provider-secret-123')
  expect(all).not.toContain('x'.repeat(PATH_SHOWN + 1))
})

test('a key across the clip is masked first: no more of it than its display prefix is written', async () => {
  const key = await secretKey()
  // The key starts 10 characters before the bound: cut first, `sk-sy-` and 4 secret characters
  // would stay; starting 30 before, 24 — too few for the mask to know it as a key.
  for (const before of [10, 30]) {
    const id = `key-across-${before}`
    const path = `/v1/${'y'.repeat(PATH_SHOWN - 4 - before)}${key}/rest`
    const res = await fetch(`${gw.url}${path}`, { headers: { 'x-request-id': id } })
    await res.arrayBuffer()
    const [access] = (await linesOf(id)).filter((l) => l.msg === 'access')
    expect(String(access!.path).length).toBeLessThanOrEqual(PATH_SHOWN + 1)
    // The display prefix (`sk-sy-` and 6) may show; a seventh secret character may not.
    expect({ before, line: JSON.stringify(access) }).not.toEqual({
      before,
      line: expect.stringContaining(key.slice(0, 13)),
    })
  }
})

test('an admin path with a key across the clip: the audit line holds no more than its display prefix', async () => {
  const key = await secretKey()
  const id = 'audit-key-across'
  const res = await fetch(`${gw.url}/admin/v1/keys/${'z'.repeat(170)}${key}/disable`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-request-id': id },
  })
  await res.arrayBuffer()
  const lines = await linesOf(id)
  expect(lines.map((l) => l.msg).sort()).toEqual(['access', 'audit'])
  for (const l of lines) {
    expect({ msg: l.msg, line: JSON.stringify(l) }).not.toEqual({
      msg: l.msg,
      line: expect.stringContaining(key.slice(0, 13)),
    })
  }
})
