/**
 * A key holder's console session (`/console/me`) dies with its account, as the key's requests are
 * refused with it. Found by an audit: the session was tied to the key's state only, so with the
 * account disabled (every request of its keys a 403 `account_disabled`) the page kept working,
 * and a disabled account's key could even sign in.
 *
 * Decided: disabling the account ends its keys' sessions when it is written, by whichever process
 * writes it (the command line included), so a disable and an enable with no look between leave no
 * session alive; re-enabling brings none back, a new sign-in is needed. A session the disable did
 * not end (opened as it was being written, or by an older build's write) is refused and deleted by
 * the first look, its binding now unbound. Signing in with the key meanwhile is refused as its
 * requests are: 403 `account_disabled` (403 `key_disabled` for a disabled key, where it was a 401
 * "not signed in" that did not say why).
 * A suspension and a plan expired under `disable` do not end a session: they are states the page
 * exists to explain (requests refused now, and why), as `/v1/usage` answers them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { backends } from '../../support/backends.ts'
import { cliProcess } from '../../support/cli.ts'
import { ADMIN_TOKEN, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'
import { writeConfig } from '../../support/process.ts'

const started: TestGateway[] = []
afterEach(async () => {
  for (const g of started.splice(0)) await g.stop().catch(() => {})
})

const doc = () =>
  testConfigDoc({
    plans: { ...PLANS, trial: { rpm: 10, rpd: null, models: ['*'], days: 7, on_expiry: 'disable' } },
  })

async function keySignIn(gw: TestGateway, key: string) {
  const r = await fetch(`${gw.url}/console/me/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(gw.url).origin },
    body: JSON.stringify({ key }),
  })
  const body = (await r.json()) as any
  return { status: r.status, code: body.error?.code, cookie: r.headers.get('set-cookie')?.split(';')[0] }
}

async function me(gw: TestGateway, cookie: string) {
  const r = await fetch(`${gw.url}/console/me/api/overview`, { headers: { cookie } })
  const body = (await r.json()) as any
  return { status: r.status, code: body.error?.code, body }
}

const admin = (gw: TestGateway, path: string, body?: unknown) =>
  fetch(`${gw.url}/admin/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then((r) => r.status)

for (const backend of backends('console-me-session-account.test.ts').filter(
  (b) => b.name !== 'postgres+redis',
)) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    // One gateway and database for the backend's five tests: each test's account and keys are its
    // own (a disable, a suspension or a plan's end touches only them, and the clock is the real
    // one), so what one test writes is nothing another reads; the fifth's bystander shows a
    // session of another account surviving a disable. A gateway and a clone each was 8 more
    // starts on two backends (docs/benchmarks/suite-cpu.md, stop 65).
    let shared: TestGateway | undefined
    beforeAll(async () => {
      shared = await startGateway({ doc: doc(), backend: await backend.fresh() })
    })
    afterAll(async () => {
      await shared?.stop()
    })
    const start = async () => shared!

    test('disabling the account ends its key holder’s session; signing in is a 403 account_disabled; enabling brings it back only by a new sign-in', async () => {
      const gw = await start()
      const k = await gw.key('holder-co', 'pro')
      const { cookie } = await keySignIn(gw, k.key)
      expect((await me(gw, cookie!)).status).toBe(200)

      expect(await admin(gw, '/accounts/holder-co/disable')).toBe(200)
      expect(await me(gw, cookie!)).toMatchObject({ status: 401, code: 'not_signed_in' })
      // A new sign-in is refused as the key's requests are, saying why.
      const refused = await keySignIn(gw, k.key)
      expect(refused).toMatchObject({ status: 403, code: 'account_disabled', cookie: undefined })
      const sessions = await gw.deps.store.listSessions(Date.now(), 100)
      expect(sessions.filter((x) => x.keyId === k.id)).toEqual([])

      expect(await admin(gw, '/accounts/holder-co/enable')).toBe(200)
      expect((await me(gw, cookie!)).status).toBe(401)
      const again = await keySignIn(gw, k.key)
      expect(again.status).toBe(200)
      expect((await me(gw, again.cookie!)).status).toBe(200)
    }, 60_000)

    test('a session still stored while its account is disabled is refused by the first look, and stays ended', async () => {
      const gw = await start()
      const k = await gw.key('backstop-co', 'pro')
      const { cookie } = await keySignIn(gw, k.key)
      // Disabled by a write that ends no session (an older build; a sign-in racing the disable).
      const account = (await gw.deps.store.getAccount('backstop-co'))!
      await gw.deps.store.setAccountEnabled(account.id, false)
      expect(await me(gw, cookie!)).toMatchObject({ status: 401, code: 'not_signed_in' })
      await gw.deps.store.setAccountEnabled(account.id, true)
      expect(await me(gw, cookie!)).toMatchObject({ status: 401, code: 'not_signed_in' })
    }, 60_000)

    test('a disabled key signs in to nothing, saying why: 403 key_disabled', async () => {
      const gw = await start()
      const k = await gw.key('off-co', 'pro')
      expect(await admin(gw, `/keys/${k.id}/disable`)).toBe(200)
      expect(await keySignIn(gw, k.key)).toMatchObject({
        status: 403,
        code: 'key_disabled',
        cookie: undefined,
      })
    }, 60_000)

    test('a disable and an enable with no look between leave the session ended (account or key)', async () => {
      const gw = await start()
      const k = await gw.key('blink-co', 'pro')
      const other = await gw.key('bystander', 'pro')
      const { cookie } = await keySignIn(gw, k.key)
      const { cookie: bystander } = await keySignIn(gw, other.key)
      expect(await admin(gw, '/accounts/blink-co/disable')).toBe(200)
      expect(await admin(gw, '/accounts/blink-co/enable')).toBe(200)
      expect(await me(gw, cookie!)).toMatchObject({ status: 401, code: 'not_signed_in' })
      // Another account's session is untouched.
      expect((await me(gw, bystander!)).status).toBe(200)
      // The same for a key: disabled and enabled again, its session stays ended.
      expect(await admin(gw, `/keys/${other.id}/disable`)).toBe(200)
      expect(await admin(gw, `/keys/${other.id}/enable`)).toBe(200)
      expect(await me(gw, bystander!)).toMatchObject({ status: 401, code: 'not_signed_in' })
    }, 60_000)

    test('a suspension and a plan expired under `disable` keep the session: the page says why requests are refused', async () => {
      const gw = await start()
      const k = await gw.key('trial-co', 'trial')
      const { cookie } = await keySignIn(gw, k.key)

      await gw.deps.store.setKeySuspended(k.id, Date.now() + 60_000)
      const suspended = await me(gw, cookie!)
      expect(suspended.status).toBe(200)
      expect(suspended.body.usage.account_information).toMatchObject({
        is_enabled: false,
        disabled_reason: 'key_suspended',
      })
      expect(await admin(gw, `/keys/${k.id}/unsuspend`)).toBe(200)

      // --days 0 ends the plan now; trial's policy at its end is `disable`.
      expect(await admin(gw, '/accounts/trial-co/plan', { plan: 'trial', days: 0 })).toBe(200)
      const expired = await me(gw, cookie!)
      expect(expired.status).toBe(200)
      expect(expired.body.usage.account_information).toMatchObject({
        is_enabled: false,
        disabled_reason: 'plan_expired',
      })
      // Both may sign in, to see the same.
      expect((await keySignIn(gw, k.key)).status).toBe(200)
    }, 60_000)
  })
}

test('`switchyard accounts disable` in another process ends the key holder’s session', async () => {
  const gw = await startGateway({ doc: doc() })
  started.push(gw)
  const k = await gw.key('cli-co', 'pro')
  const { cookie } = await keySignIn(gw, k.key)
  const config = writeConfig(gw.dir, { ...doc(), logging: { level: 'error' } }, 'cli.yaml')
  const base = ['--config', config, '--db', join(gw.dir, 'switchyard.db')]
  expect((await cliProcess(['accounts', 'disable', 'cli-co', ...base])).code).toBe(0)
  expect((await cliProcess(['accounts', 'enable', 'cli-co', ...base])).code).toBe(0)
  expect(await me(gw, cookie!)).toMatchObject({ status: 401, code: 'not_signed_in' })
}, 60_000)
