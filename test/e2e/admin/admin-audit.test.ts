/**
 * Audit lines say who changed what (DESIGN §9; issue 31, finding 4). An admin API change named
 * only its route and path: `POST /admin/v1/accounts` left no account, plan or days, a new key no
 * account or id. Now the target is what was changed, as the command line names it (`accounts
 * create acme` → target `acme`), with the fields set beside it. And a refused console sign-in —
 * a wrong admin token — wrote only an info access line; it is a `warn` audit line now, as the
 * admin API's refusals are, never holding the token.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

const auditLines = () =>
  gw.logs.map((l) => JSON.parse(l)).filter((l: { msg: string }) => l.msg === 'audit') as Array<
    Record<string, any>
  >

/** The audit line of the response with this request id (written once the response is sent). */
async function lineOf(r: Response): Promise<Record<string, any>> {
  const id = r.headers.get('x-request-id')
  for (let i = 0; i < 200; i++) {
    const line = auditLines().find((l) => l.request_id === id)
    if (line) return line
    await Bun.sleep(10)
  }
  throw new Error(`no audit line for ${id}`)
}

const admin = (method: string, path: string, body?: unknown) =>
  fetch(`${gw.url}/admin/v1${path}`, {
    method,
    headers: { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

describe('admin API audit lines name what changed', () => {
  test('accounts: the account is the target; plan and days are the change', async () => {
    const created = await admin('POST', '/accounts', { name: 'acme', plan: 'pro', days: 30 })
    expect(created.status).toBe(200)
    expect(await lineOf(created)).toMatchObject({
      level: 'info',
      actor: 'admin_token',
      action: 'POST /admin/v1/accounts',
      target: 'acme',
      change: { plan: 'pro', days: 30 },
      path: '/admin/v1/accounts',
      outcome: 'ok',
      status: 200,
    })
    const plan = await admin('POST', '/accounts/acme/plan', { plan: 'basic', days: 7 })
    expect(await lineOf(plan)).toMatchObject({
      action: 'POST /admin/v1/accounts/:name/plan',
      target: 'acme',
      change: { plan: 'basic', days: 7 },
      outcome: 'ok',
    })
    const disabled = await admin('POST', '/accounts/acme/disable')
    expect(await lineOf(disabled)).toMatchObject({
      action: 'POST /admin/v1/accounts/:name/disable',
      target: 'acme',
      outcome: 'ok',
    })
    // A refused change says what was attempted, at warn.
    const again = await admin('POST', '/accounts', { name: 'acme', plan: 'free' })
    expect(again.status).toBe(409)
    expect(await lineOf(again)).toMatchObject({
      level: 'warn',
      target: 'acme',
      change: { plan: 'free' },
      outcome: 'account_exists',
    })
  })

  test('keys: a new key names its account and its id, never the key; key routes name the key', async () => {
    await admin('POST', '/accounts/acme/enable')
    const r = await admin('POST', '/keys', { account: 'acme', name: 'ci', limits: { tpm: 1000 } })
    expect(r.status).toBe(200)
    const k = (await r.json()) as any
    const line = await lineOf(r)
    expect(line).toMatchObject({
      action: 'POST /admin/v1/keys',
      target: 'acme',
      change: { name: 'ci', key: k.id, prefix: k.prefix, limits: { tpm: 1000 } },
      outcome: 'ok',
    })
    expect(JSON.stringify(line)).not.toContain(k.key)
    for (const [method, path, body] of [
      ['PATCH', `/keys/${k.id}/limits`, { tpm: 2000 }],
      ['POST', `/keys/${k.id}/rotate`, undefined],
      ['POST', `/keys/${k.id}/revoke`, undefined],
    ] as const) {
      const res = await admin(method, path, body)
      expect(res.status).toBe(200)
      expect(await lineOf(res)).toMatchObject({ target: k.id, path: `/admin/v1${path}`, outcome: 'ok' })
    }
    const limits = auditLines().find((l) => l.action === 'PATCH /admin/v1/keys/:id/limits')!
    expect(limits.change.limits).toMatchObject({ tpm: 2000 })
    expect(gw.logs.join('\n')).not.toMatch(/sk-sy-[A-Za-z0-9]{20,}/)
  })

  test('sessions: revoking a kind names it', async () => {
    const r = await admin('POST', '/sessions/revoke', { kind: 'key' })
    expect(await lineOf(r)).toMatchObject({ target: 'key', change: { kind: 'key' }, outcome: 'ok' })
  })

  test('a long name is cut in the line, as in the reply', async () => {
    const r = await admin('POST', '/accounts', { name: 'n'.repeat(10_000) })
    expect(r.status).toBe(400)
    const line = await lineOf(r)
    expect(line.target).toBe(`${'n'.repeat(200)}…`)
    expect(JSON.stringify(line).length).toBeLessThan(1_000)
  })
})

describe('console sign-in audit lines', () => {
  const signIn = (token: string) =>
    fetch(`${gw.url}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: new URL(gw.url).origin },
      body: JSON.stringify({ token }),
    })

  test('a wrong token → a warn audit line (unauthenticated, invalid_admin_token), without the token', async () => {
    const wrong = `wrong-console-token-${'q'.repeat(24)}`
    const r = await signIn(wrong)
    expect(r.status).toBe(401)
    expect(await lineOf(r)).toMatchObject({
      level: 'warn',
      actor: 'unauthenticated',
      action: 'POST /console/session',
      target: 'console',
      outcome: 'invalid_admin_token',
      status: 401,
      client: '127.0.0.1',
    })
    const ok = await signIn(ADMIN_TOKEN)
    expect(ok.status).toBe(200)
    expect(await lineOf(ok)).toMatchObject({ level: 'info', actor: 'admin_token', outcome: 'ok' })
    const all = gw.logs.join('\n')
    expect(all).not.toContain(ADMIN_TOKEN)
    expect(all).not.toContain('wrong-console-token')
  })
})

// A key sent where its id belongs was written whole into the access line's path and the audit
// line's target and path.
test('a key in an admin path: no log line holds it, the answer names its id', async () => {
  const { id, key } = await gw.key('pasted')
  const r = await admin('POST', `/keys/${key}/revoke`)
  expect(r.status).toBe(404)
  const body = await r.text()
  expect(body).toContain(`its id is ${id}`)
  expect(body).not.toContain(key)
  const line = await lineOf(r)
  expect(line.target).toBe(`${key.slice(0, 12)}…`)
  expect(gw.logs.join('')).not.toContain(key)
})
