/**
 * Failed admin authentication is throttled per client address and audited: one line per admin
 * request, never the token.
 */
import { describe, expect, test } from 'bun:test'
import { ManualClock } from '../../../src/util/clock.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'

let gw: TestGateway | undefined
afterEach(async () => {
  await gw?.stop()
  gw = undefined
})

const auditLines = (g: TestGateway) =>
  g.logs.map((l) => JSON.parse(l)).filter((l: { msg: string }) => l.msg === 'audit') as Array<
    Record<string, any>
  >

/** Audit lines are written once the response is sent; wait for `n` of them. */
async function waitForAudit(g: TestGateway, n: number) {
  for (let i = 0; i < 200 && auditLines(g).length < n; i++) await Bun.sleep(10)
  return auditLines(g)
}

describe('admin authentication throttle', () => {
  test('1,000 wrong tokens: throttled after 5, each refusal logged once, the right token passes during and after the window', async () => {
    const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'))
    gw = await startGateway({ clock })
    const g = gw
    const statuses = new Map<number, number>()
    const ids: string[] = []
    const wrong = Array.from({ length: 1000 }, (_, i) => `wrong-token-${i}-${'z'.repeat(24)}`)
    for (let i = 0; i < wrong.length; i += 50) {
      const batch = await Promise.all(
        wrong.slice(i, i + 50).map((t) => fetch(`${g.url}/admin/v1/accounts`, { headers: bearer(t) })),
      )
      for (const r of batch) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
        ids.push(r.headers.get('x-request-id')!)
        if (r.status === 429) {
          expect(((await r.json()) as any).error.code).toBe('admin_auth_throttled')
          expect(Number(r.headers.get('retry-after'))).toBeWithin(1, 61)
        } else await r.body?.cancel()
      }
    }
    expect(Object.fromEntries(statuses)).toEqual({ 401: 5, 429: 995 })

    // DESIGN §16 (issue 42): the right token is never throttled by wrong ones; it was locked out
    // with them for the window (429), so anyone at the operator's address could lock the operator out.
    const during = await fetch(`${g.url}/admin/v1/accounts`, { headers: bearer(ADMIN_TOKEN) })
    expect(during.status).toBe(200)
    const wrongAgain = await fetch(`${g.url}/admin/v1/accounts`, { headers: bearer(wrong[0]!) })
    expect(wrongAgain.status).toBe(429)
    clock.advance(60_000)
    const after = await fetch(`${g.url}/admin/v1/accounts`, { headers: bearer(ADMIN_TOKEN) })
    expect(after.status).toBe(200)

    const lines = await waitForAudit(g, 1003)
    expect(lines).toHaveLength(1003)
    const byId = new Map<string, number>()
    for (const l of lines) byId.set(l.request_id, (byId.get(l.request_id) ?? 0) + 1)
    for (const id of ids) expect(byId.get(id)).toBe(1)
    const outcomes = new Map<string, number>()
    for (const l of lines) outcomes.set(l.outcome, (outcomes.get(l.outcome) ?? 0) + 1)
    expect(Object.fromEntries(outcomes)).toEqual({ invalid_admin_token: 5, admin_auth_throttled: 996, ok: 2 })
    expect(lines.at(-1)).toMatchObject({
      level: 'info',
      actor: 'admin_token',
      action: 'GET /admin/v1/accounts',
      target: '/admin/v1/accounts',
      outcome: 'ok',
      status: 200,
      client: '127.0.0.1',
    })
    expect(lines[0]).toMatchObject({
      level: 'warn',
      actor: 'unauthenticated',
      status: 401,
      client: '127.0.0.1',
    })
    const all = g.logs.join('\n')
    expect(all).not.toContain(ADMIN_TOKEN)
    expect(all).not.toContain('wrong-token-')
  })

  test('a missing Authorization header is refused and logged but does not lock the address out', async () => {
    gw = await startGateway()
    for (let i = 0; i < 20; i++) expect((await fetch(`${gw.url}/admin/v1/plans`)).status).toBe(401)
    expect((await fetch(`${gw.url}/admin/v1/plans`, { headers: bearer(ADMIN_TOKEN) })).status).toBe(200)
    const lines = await waitForAudit(gw, 21)
    expect(lines.filter((l) => l.outcome === 'invalid_admin_token')).toHaveLength(20)
  })

  test('user keys count as failures; throttling answers before the body is read; the right token still passes', async () => {
    gw = await startGateway()
    const { key } = await gw.key('u', 'free')
    for (let i = 0; i < 5; i++) {
      expect((await fetch(`${gw.url}/admin/v1/plans`, { headers: bearer(key) })).status).toBe(403)
    }
    const r = await fetch(`${gw.url}/admin/v1/accounts`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: '{not json',
    })
    expect(r.status).toBe(429)
    // The right token is read on: its body is parsed and refused as what it is.
    const right = await fetch(`${gw.url}/admin/v1/accounts`, {
      method: 'POST',
      headers: { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' },
      body: '{not json',
    })
    expect(right.status).toBe(400)
  })

  test('every admin call is audited with its route, path and outcome', async () => {
    gw = await startGateway()
    const admin = { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' }
    const post = (path: string, body?: unknown) =>
      fetch(`${gw!.url}${path}`, {
        method: 'POST',
        headers: admin,
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    expect((await post('/admin/v1/accounts', { name: 'acme', plan: 'pro' })).status).toBe(200)
    const key = (await (await post('/admin/v1/keys', { account: 'acme' })).json()) as any
    expect((await post(`/admin/v1/keys/${key.id}/revoke`)).status).toBe(200)
    expect((await post('/admin/v1/accounts/nobody/disable')).status).toBe(404)
    expect((await post('/admin/v1/accounts', { name: 7 })).status).toBe(400)
    const lines = await waitForAudit(gw, 5)
    // The target is what was changed, as the command line names it (see admin-audit.test.ts).
    expect(lines.map((l) => [l.actor, l.action, l.target, l.path, l.outcome, l.status])).toEqual([
      ['admin_token', 'POST /admin/v1/accounts', 'acme', '/admin/v1/accounts', 'ok', 200],
      ['admin_token', 'POST /admin/v1/keys', 'acme', '/admin/v1/keys', 'ok', 200],
      ['admin_token', 'POST /admin/v1/keys/:id/revoke', key.id, `/admin/v1/keys/${key.id}/revoke`, 'ok', 200],
      [
        'admin_token',
        'POST /admin/v1/accounts/:name/disable',
        'nobody',
        '/admin/v1/accounts/nobody/disable',
        'account_not_found',
        404,
      ],
      [
        'admin_token',
        'POST /admin/v1/accounts',
        '/admin/v1/accounts',
        '/admin/v1/accounts',
        'validation',
        400,
      ],
    ])
    for (const l of lines) expect(l.request_id).toMatch(/^req_/)
    expect(gw.logs.join('\n')).not.toContain(key.key)
  })
})
