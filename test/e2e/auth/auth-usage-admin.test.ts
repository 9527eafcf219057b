import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${gw.url}${path}`, { headers })

describe('auth, /v1/usage and the admin API on a real server', () => {
  test('healthz and request ids', async () => {
    const r = await get('/healthz')
    expect(r.status).toBe(200)
    expect((await r.json()) as any).toMatchObject({ status: 'ok' })
    expect(r.headers.get('x-request-id')).toMatch(/^req_/)
    const echoed = await get('/healthz', { 'x-request-id': 'my-trace-123' })
    expect(echoed.headers.get('x-request-id')).toBe('my-trace-123')
    const nf = await get('/nope')
    expect(nf.status).toBe(404)
    expect(nf.headers.get('x-request-id')).toMatch(/^req_/)
    const error = ((await nf.json()) as any).error
    expect(error).toMatchObject({ type: 'not_found_error', code: 'not_found' })
    // It names every surface (it had not caught up with Responses and Embeddings).
    for (const path of [
      '/v1/chat/completions',
      '/v1/messages',
      '/v1/responses',
      '/v1/embeddings',
      '/v1/models',
    ])
      expect(error.message).toContain(path)
  })

  test('/metrics counts responses by surface and real status', async () => {
    await get('/definitely-not-a-route')
    await get('/v1/models')
    const text = await (await get('/metrics')).text()
    expect(text).toContain('switchyard_requests_total{surface="other",model="",status="404"}')
    expect(text).toContain('switchyard_requests_total{surface="models",model="",status="401"}')
    expect(text).toContain('# TYPE switchyard_open_streams gauge')
  })

  test('usage for an enabled key has every required field', async () => {
    const { key, id } = await gw.key('alice', 'free')
    const r = await get('/v1/usage', bearer(key))
    expect(r.status).toBe(200)
    const u = (await r.json()) as any
    expect(u.object).toBe('usage')
    expect(u.account_information).toMatchObject({
      name: 'alice',
      plan: 'free',
      is_enabled: true,
      key: { id, name: 'test' },
    })
    expect(typeof u.account_information.account_id).toBe('number')
    expect(u.account_information.key.prefix).toBe(key.slice(0, 12))
    expect(u.rate_limits).toMatchObject({ rpm: 5, rpd: 100 })
    expect(u.subscription_details).toMatchObject({
      plan: 'free',
      status: 'active',
      expires_at: null,
      remaining_days: null,
    })
    expect(u.usage.today).toMatchObject({ requests: 0 })
    expect(JSON.stringify(u)).not.toContain(key)
  })

  test('remaining_days counts down for a paid plan', async () => {
    const { key } = await gw.key('paid', 'pro', 30)
    const u = await ((await (await get('/v1/usage', bearer(key))).json()) as any)
    expect(u.subscription_details).toMatchObject({ plan: 'pro', remaining_days: 30 })
    expect(u.rate_limits).toMatchObject({ rpm: 10, rpd: null })
  })

  test('disabled key: 403 on protected routes, 200 with is_enabled false on /v1/usage', async () => {
    const { key, id } = await gw.key('bob', 'free')
    await gw.deps.accounts.setKeyState(id, 'disabled')
    const models = await get('/v1/models', bearer(key))
    expect(models.status).toBe(403)
    expect(((await models.json()) as any).error.code).toBe('key_disabled')
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: '{}',
    })
    expect(chat.status).toBe(403)
    const u = await get('/v1/usage', bearer(key))
    expect(u.status).toBe(200)
    expect(((await u.json()) as any).account_information).toMatchObject({
      is_enabled: false,
      disabled_reason: 'key_disabled',
    })
  })

  test('disabled account: 403 account_disabled', async () => {
    const { key } = await gw.key('carol', 'free')
    await gw.deps.accounts.setEnabled('carol', false)
    const r = await get('/v1/models', bearer(key))
    expect(r.status).toBe(403)
    expect(((await r.json()) as any).error.code).toBe('account_disabled')
    expect(
      (await ((await (await get('/v1/usage', bearer(key))).json()) as any)).account_information.is_enabled,
    ).toBe(false)
  })

  test('revoked key, unknown key, no key and malformed headers → 401 invalid_api_key', async () => {
    const { key, id } = await gw.key('dave', 'free')
    await gw.deps.accounts.setKeyState(id, 'revoked')
    const cases: Array<Record<string, string>> = [
      bearer(key),
      bearer(`sk-sy-${'A'.repeat(40)}`),
      {},
      { authorization: key },
      { authorization: 'Basic abc' },
      { authorization: 'Bearer ' },
      bearer('not-a-key'),
    ]
    for (const h of cases) {
      for (const path of ['/v1/usage', '/v1/models']) {
        const r = await get(path, h)
        expect(r.status).toBe(401)
        const body = (await r.json()) as any
        expect(body.error).toMatchObject({ code: 'invalid_api_key', type: 'authentication_error' })
        expect(JSON.stringify(body)).not.toContain(key)
      }
    }
  })

  test('admin API: token accepted, user keys and wrong tokens refused', async () => {
    const { key } = await gw.key('erin', 'free')
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }
    expect((await get('/admin/v1/accounts', bearer(key))).status).toBe(403)
    expect((await get('/admin/v1/accounts', { authorization: 'Bearer wrong' })).status).toBe(401)
    expect((await get('/admin/v1/accounts')).status).toBe(401)
    const list = await get('/admin/v1/accounts', admin)
    expect(list.status).toBe(200)
    expect(((await list.json()) as any).data.map((a: { name: string }) => a.name)).toContain('erin')

    const created = await fetch(`${gw.url}/admin/v1/accounts`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'frank', plan: 'pro', days: 30 }),
    })
    expect(created.status).toBe(200)
    expect((await created.json()) as any).toMatchObject({
      name: 'frank',
      plan: 'pro',
      remaining_days: 30,
      enabled: true,
    })
    const k = await ((await (
      await fetch(`${gw.url}/admin/v1/keys`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ account: 'frank', name: 'ci' }),
      })
    ).json()) as any)
    expect(k).toMatchObject({ account: 'frank', name: 'ci' })
    expect(k.key).toMatch(/^sk-sy-/)
    expect((await get('/v1/usage', bearer(k.key))).status).toBe(200)
    const disabled = await ((await (
      await fetch(`${gw.url}/admin/v1/keys/${k.id}/disable`, { method: 'POST', headers: admin })
    ).json()) as any)
    expect(disabled.state).toBe('disabled')
    const plan = await fetch(`${gw.url}/admin/v1/accounts/frank/plan`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ plan: 'basic' }),
    })
    expect(((await plan.json()) as any).plan).toBe('basic')
    const bad = await fetch(`${gw.url}/admin/v1/accounts`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 5 }),
    })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as any).error.param).toBe('name')
    const missing = await get('/admin/v1/accounts/nobody', admin)
    expect(missing.status).toBe(404)
    expect(((await missing.json()) as any).error.code).toBe('account_not_found')
  })

  test('admin API: a field the route does not take → 400 naming it (a typo was dropped silently), days named with its range', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }
    const post = async (path: string, body: unknown) => {
      const r = await fetch(`${gw.url}/admin/v1${path}`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify(body),
      })
      return { status: r.status, error: ((await r.json()) as any).error }
    }
    await gw.key('gina', 'free')
    // Each of these used to succeed: an account, a plan without its days, a key without its limits.
    for (const [path, body, field] of [
      ['/accounts', { name: 'hal', plan: 'pro', dayz: 7 }, 'dayz'],
      ['/accounts/gina/plan', { plan: 'pro', dayz: 7 }, 'dayz'],
      ['/keys', { account: 'gina', limitz: { tpm: 100 } }, 'limitz'],
    ] as const) {
      const r = await post(path, body)
      expect(r.status).toBe(400)
      expect(r.error).toMatchObject({ code: 'invalid_value', param: field })
    }
    expect((await get('/admin/v1/accounts/hal', admin)).status).toBe(404)
    expect(((await (await get('/admin/v1/accounts/gina', admin)).json()) as any).plan).toBe('free')
    const days = await post('/accounts/gina/plan', { plan: 'pro', days: 36501 })
    expect(days.status).toBe(400)
    // The range, never the value sent (issue 31: a value can be a key). 0 ends the plan now, as
    // the command line's --days 0 does.
    expect(days.error.message).toBe('days: must be an integer from 0 to 36500.')
    expect((await post('/accounts/gina/plan', { plan: 'pro', days: 7 })).status).toBe(200)
  })

  test('the raw keys appear in neither the database files nor the logs', async () => {
    const { key } = await gw.key('secret-holder', 'free')
    await get('/v1/usage', bearer(key))
    await get('/v1/models', bearer(`${key}x`))
    await gw.deps.recorder.flush()
    expect(gw.logs.join('\n')).not.toContain(key.slice(6))
    for (const f of readdirSync(gw.dir)) {
      expect(readFileSync(join(gw.dir, f)).toString('latin1').includes(key.slice(6))).toBe(false)
    }
  })
})

test('admin API is off (404) when no token is configured', async () => {
  const { testConfigDoc } = await import('../../support/config-doc.ts')
  const off = await startGateway({ doc: testConfigDoc({ admin: { token: '' } }) })
  try {
    const r = await fetch(`${off.url}/admin/v1/accounts`, { headers: { authorization: 'Bearer anything' } })
    expect(r.status).toBe(404)
  } finally {
    await off.stop()
  }
})
