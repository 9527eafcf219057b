/**
 * Console sessions are bound to the credential they were opened with (issue 22, finding 2): a
 * restart with a new admin token signs every console out (the same token keeps them); a key
 * holder's session ends when its key is rotated or disabled, and enabling the key again does not
 * bring it back. The operator lists and ends sessions from the admin API and `switchyard
 * sessions`. On every backend; the restart runs the real gateway twice on one database.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { backends } from '../../support/backends.ts'
import { cli, REPO } from '../../support/cli.ts'
import { startGateway, type TestGateway, tempDir, testConfigDoc } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'

const OLD = 'old-admin-token-0123456789-abcdefghijklmnop'
const NEW = 'new-admin-token-0123456789-abcdefghijklmnop'
const started: TestGateway[] = []
afterEach(async () => {
  for (const g of started.splice(0)) await g.stop().catch(() => {})
})

const cookieOf = (r: Response) => r.headers.get('set-cookie')!.split(';')[0]!

async function signIn(gw: TestGateway, token: string) {
  const r = await fetch(`${gw.url}/console/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(gw.url).origin },
    body: JSON.stringify({ token }),
  })
  expect(r.status).toBe(200)
  return cookieOf(r)
}

async function keySignIn(gw: TestGateway, key: string) {
  const r = await fetch(`${gw.url}/console/me/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(gw.url).origin },
    body: JSON.stringify({ key }),
  })
  expect(r.status).toBe(200)
  return cookieOf(r)
}

/** A console write with the cookie: create an account. */
const createAccount = (gw: TestGateway, cookie: string, name: string) =>
  fetch(`${gw.url}/admin/v1/accounts`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json', origin: new URL(gw.url).origin },
    body: JSON.stringify({ name }),
  }).then((r) => r.status)

const adminStatus = (gw: TestGateway, cookie: string) =>
  fetch(`${gw.url}/admin/v1/accounts`, { headers: { cookie } }).then((r) => r.status)
const meStatus = (gw: TestGateway, cookie: string) =>
  fetch(`${gw.url}/console/me/api/overview`, { headers: { cookie } }).then((r) => r.status)

const admin = (gw: TestGateway, token: string, method: string, path: string, body?: unknown) =>
  fetch(`${gw.url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))

for (const backend of backends('console-sessions.test.ts').filter((b) => b.name !== 'postgres+redis')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    test('a restart with a new admin token ends the old sessions; the same token keeps them', async () => {
      const urls = await backend.fresh()
      const doc = (token: string) => testConfigDoc({ admin: { token } })
      // The database outlives each gateway (a test gateway removes its own directory).
      const dbPath = join(tempDir(), 'switchyard.db')
      const first = await startGateway({ doc: doc(OLD), backend: urls, dbPath })
      started.push(first)
      const kept = await signIn(first, OLD)
      const stale = await signIn(first, OLD)
      expect(await adminStatus(first, stale)).toBe(200)
      await first.stop()
      started.pop()

      // Same token: still signed in.
      const same = await startGateway({ doc: doc(OLD), backend: urls, dbPath })
      started.push(same)
      expect(await adminStatus(same, kept)).toBe(200)
      await same.stop()
      started.pop()

      // New token: the old cookie opens nothing, reads or writes, and stays dead.
      const next = await startGateway({ doc: doc(NEW), backend: urls, dbPath })
      started.push(next)
      expect(await createAccount(next, stale, 'made-with-old-cookie')).toBe(401)
      expect(await adminStatus(next, stale)).toBe(401)
      expect(await adminStatus(next, kept)).toBe(401)
      expect((await fetch(`${next.url}/console/session`, { headers: { cookie: kept } })).status).toBe(401)
      expect(await next.deps.store.getAccount('made-with-old-cookie')).toBeNull()
      // The new token signs in.
      expect(await adminStatus(next, await signIn(next, NEW))).toBe(200)
    }, 60_000)

    test('a key holder’s session ends when the key is rotated or disabled, and stays ended', async () => {
      const gw = await startGateway({
        doc: testConfigDoc({ admin: { token: OLD } }),
        backend: await backend.fresh(),
      })
      started.push(gw)
      const k = await gw.key('holder-co', 'pro')
      const before = await keySignIn(gw, k.key)
      expect(await meStatus(gw, before)).toBe(200)
      const rotated = await admin(gw, OLD, 'POST', `/keys/${k.id}/rotate`)
      expect(rotated.status).toBe(200)
      expect(await meStatus(gw, before)).toBe(401)

      const after = await keySignIn(gw, rotated.body.key)
      expect(await meStatus(gw, after)).toBe(200)
      expect((await admin(gw, OLD, 'POST', `/keys/${k.id}/disable`)).status).toBe(200)
      expect(await meStatus(gw, after)).toBe(401)
      expect((await admin(gw, OLD, 'POST', `/keys/${k.id}/enable`)).status).toBe(200)
      expect(await meStatus(gw, after)).toBe(401)
      expect(await meStatus(gw, await keySignIn(gw, rotated.body.key))).toBe(200)
    }, 60_000)

    test('the admin API lists sessions and ends one, a key’s, or a kind’s; bad selectors are 400s', async () => {
      const gw = await startGateway({
        doc: testConfigDoc({ admin: { token: OLD } }),
        backend: await backend.fresh(),
      })
      started.push(gw)
      const a1 = await signIn(gw, OLD)
      const a2 = await signIn(gw, OLD)
      const k = await gw.key('listed-co', 'pro')
      const m = await keySignIn(gw, k.key)
      const list = await admin(gw, OLD, 'GET', '/sessions')
      expect(list.status).toBe(200)
      expect(list.body.data.length).toBe(3)
      expect(list.body.data.map((s: any) => s.kind).sort()).toEqual(['admin', 'admin', 'key'])
      expect(list.body.data.find((s: any) => s.kind === 'key').key_id).toBe(k.id)
      for (const s of list.body.data) {
        expect(s.id).toMatch(/^[0-9a-f]{16}$/)
        expect(Date.parse(s.expires_at)).toBeGreaterThan(Date.now())
      }
      // No cookie value appears in the list.
      for (const c of [a1, a2, m]) expect(JSON.stringify(list.body)).not.toContain(c.split('=')[1]!)

      // End one admin session: which one is unknown from the list alone, so end both by id.
      const admins = list.body.data.filter((s: any) => s.kind === 'admin')
      expect(await admin(gw, OLD, 'DELETE', `/sessions/${admins[0].id}`)).toEqual({
        status: 200,
        body: { object: 'console.sessions.ended', ended: 1 },
      })
      expect([await adminStatus(gw, a1), await adminStatus(gw, a2)].sort()).toEqual([200, 401])
      expect((await admin(gw, OLD, 'POST', '/sessions/revoke', { key: k.id })).body.ended).toBe(1)
      expect(await meStatus(gw, m)).toBe(401)
      expect((await admin(gw, OLD, 'POST', '/sessions/revoke', { kind: 'admin' })).body.ended).toBe(1)
      expect(await adminStatus(gw, a1)).toBe(401)
      expect(await adminStatus(gw, a2)).toBe(401)
      expect((await admin(gw, OLD, 'GET', '/sessions')).body.data).toEqual([])

      for (const [method, path, body, param] of [
        ['DELETE', '/sessions/not-an-id', undefined, 'id'],
        ['POST', '/sessions/revoke', {}, 'id'],
        ['POST', '/sessions/revoke', { key: k.id, kind: 'admin' }, 'id'],
        ['POST', '/sessions/revoke', { kind: 'everyone' }, 'kind'],
      ] as const) {
        const r = await admin(gw, OLD, method, path, body)
        expect([path, r.status, r.body.error.param]).toEqual([path, 400, param])
      }
      const noKey = await admin(gw, OLD, 'POST', '/sessions/revoke', { key: 'key_doesNotExist01' })
      expect([noKey.status, noKey.body.error.code, noKey.body.error.param]).toEqual([
        404,
        'key_not_found',
        'key',
      ])
      const gone = await admin(gw, OLD, 'DELETE', '/sessions/0123456789abcdef')
      expect([gone.status, gone.body.error.code]).toEqual([404, 'session_not_found'])
      expect((await fetch(`${gw.url}/admin/v1/sessions`)).status).toBe(401)
    }, 60_000)
  })
}

test('switchyard sessions list | revoke', async () => {
  const gw = await startGateway({ doc: testConfigDoc({ admin: { token: OLD } }) })
  started.push(gw)
  const cookie = await signIn(gw, OLD)
  // The example config, pointed at the gateway's database with --db.
  const cfg = join(tempDir(), 'switchyard.yaml')
  await Bun.write(cfg, await Bun.file(join(REPO, 'switchyard.example.yaml')).text())
  const base = ['--config', cfg, '--db', join(gw.dir, 'switchyard.db')]
  const listed = await cli(['sessions', 'list', ...base, '--json'])
  expect([listed.code, listed.stderr]).toEqual([0, ''])
  const rows = listed.json()
  expect(rows.length).toBe(1)
  expect(rows[0].kind).toBe('admin')
  const text = await cli(['sessions', 'list', ...base])
  expect(text.stdout).toContain(rows[0].id)
  const revoked = await cli(['sessions', 'revoke', rows[0].id, ...base])
  expect([revoked.code, revoked.stdout.trim()]).toEqual([0, '1 console session ended'])
  expect(await adminStatus(gw, cookie)).toBe(401)
  const usage = await cli(['sessions', 'revoke', ...base])
  expect(usage.code).toBe(2)
  expect(usage.stderr).toContain('sessions revoke ID')
  // A key id that names no key ended "0 console sessions" with exit 0: a typo looked like success.
  const noKey = await cli(['sessions', 'revoke', '--key', 'key_doesNotExist01', ...base])
  expect(noKey.code).toBe(1)
  expect(noKey.stderr).toContain("no key with id 'key_doesNotExist01'")
  const badId = await cli(['sessions', 'revoke', 'xyz', ...base])
  expect(badId.code).not.toBe(0)
  expect(badId.stderr).toContain('id')
}, 60_000)
