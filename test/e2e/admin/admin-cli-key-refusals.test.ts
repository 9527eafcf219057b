/**
 * The admin API and the command line refuse the same key changes the same way. Found by an
 * audit: `PATCH /admin/v1/keys/{id}/limits` with `{}` answered 200 and changed nothing, where
 * `keys set-limits ID` with no flag is a usage error; `unsuspend` on a revoked key answered 200,
 * where enable and rotate answer 409 `key_revoked`. Now: 400 naming the body ("nothing to
 * change"), and 409 `key_revoked`, through both.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { cliProcess } from '../../support/cli.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { writeConfig } from '../../support/process.ts'

let gw: TestGateway
let base: string[]

beforeAll(async () => {
  gw = await startGateway()
  const config = writeConfig(gw.dir, testConfigDoc({ logging: { level: 'error' } }), 'cli.yaml')
  base = ['--config', config, '--db', join(gw.dir, 'switchyard.db'), '--json']
})
afterAll(() => gw.stop())

const adminCall = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${gw.url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as any }
}

describe('key changes refused alike by the admin API and the command line', () => {
  test('a limits change that names no limit → 400 naming the body; keys set-limits without a flag → usage error', async () => {
    const k = await gw.key('limits-co', 'pro')
    await adminCall('PATCH', `/keys/${k.id}/limits`, { rpm: 3 })
    const r = await adminCall('PATCH', `/keys/${k.id}/limits`, {})
    expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([400, 'invalid_value', 'body'])
    expect(r.body.error.message).toContain('nothing to change')
    expect(r.body.error.message).toContain('rpm')
    // Nothing was changed, and the same for the command line.
    expect((await adminCall('GET', `/keys/${k.id}`)).body.limits.rpm).toBe(3)
    const viaCli = await cliProcess(['keys', 'set-limits', k.id, ...base])
    expect(viaCli.code).toBe(2)
    expect(viaCli.stderr).toContain('nothing to change')
    // A key that does not exist is still named as such.
    expect((await adminCall('PATCH', '/keys/key_nope/limits', { rpm: 1 })).status).toBe(404)
  })

  test('unsuspending a revoked key → 409 key_revoked, as enable and rotate; the command line the same', async () => {
    const k = await gw.key('revoked-co', 'pro')
    await gw.deps.store.setKeySuspended(k.id, Date.now() + 60_000)
    expect((await adminCall('POST', `/keys/${k.id}/revoke`)).status).toBe(200)
    for (const op of ['enable', 'rotate', 'unsuspend']) {
      const r = await adminCall('POST', `/keys/${k.id}/${op}`)
      expect([op, r.status, r.body.error?.code]).toEqual([op, 409, 'key_revoked'])
    }
    const viaCli = await cliProcess(['keys', 'unsuspend', k.id, ...base])
    expect(viaCli.code).toBe(1)
    expect(JSON.parse(viaCli.stderr.trim().split('\n').at(-1)!).error.code).toBe('key_revoked')
    // The revoked key's record is left as it was.
    expect((await gw.deps.store.getKey(k.id))!.suspendedUntil).not.toBeNull()
  })
})
