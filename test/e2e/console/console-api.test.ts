/**
 * The console's HTTP side on every backend: the session cookie and its CSRF rules, the request
 * log (filters, cursor pages, bad parameters), usage over time from the rollups (429s included),
 * live figures, and the key holder's view pinned to its own account.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { backends } from '../../support/backends.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'

let gw: TestGateway
/** The gateway the sign-in, CSRF and key holder tests share (one a backend): stopped by their describe. */
let shared: TestGateway | undefined
afterEach(async () => {
  if (gw !== shared) await gw?.stop()
})

/** Reads the whole answer, so a stream's outcome is recorded before the test looks. */
async function chat(key: string, stream = false, model = 'demo/echo') {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
  })
  await r.text()
  return r
}

/** Waits until every admitted request's outcome is stored (outcomes are written in batches). */
async function settle() {
  for (let i = 0; i < 100; i++) {
    await gw.deps.recorder.flush()
    const page = await gw.deps.store.requestLog({ limit: 200 })
    if (page.rows.every((r) => r.status !== null)) return
    await Bun.sleep(20)
  }
  throw new Error('outcomes not stored')
}

const origin = () => new URL(gw.url).origin
const adminGet = (path: string) =>
  fetch(`${gw.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
const getJson = async (path: string) => {
  const r = await adminGet(path)
  return { status: r.status, body: (await r.json()) as any }
}

async function signIn(token = ADMIN_TOKEN, from = origin()) {
  return fetch(`${gw.url}/console/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: from },
    body: JSON.stringify({ token }),
  })
}

const cookieOf = (r: Response) => r.headers.get('set-cookie')!.split(';')[0]!

for (const backend of backends('console-api.test.ts')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    const start = async (doc = testConfigDoc({ usage: { flush_ms: 10 } })) =>
      startGateway({ doc, backend: await backend.fresh() })
    // The sign-in, the CSRF rules and the key holder's view on one gateway: each signs in or makes
    // accounts of its own and reads only those (the request log test, which reads the gateway's
    // totals, keeps one of its own). A gateway and a database each was 6 more starts
    // (docs/benchmarks/suite-cpu.md, stop 65).
    const common = async () => (shared ??= await start())
    afterAll(async () => {
      await shared?.stop()
      shared = undefined
    })

    test('sign-in: wrong token 401, cross-site 403, else an HttpOnly SameSite=Strict cookie with an expiry', async () => {
      gw = await common()
      expect((await signIn('x'.repeat(40))).status).toBe(401)
      expect((await signIn(ADMIN_TOKEN, 'https://evil.example')).status).toBe(403)
      const ok = await signIn()
      expect(ok.status).toBe(200)
      const set = ok.headers.get('set-cookie')!
      expect(set).toMatch(/^sy_console=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/)
      expect(set).not.toContain(ADMIN_TOKEN)
      const r = await fetch(`${gw.url}/admin/v1/accounts`, { headers: { cookie: cookieOf(ok) } })
      expect(r.status).toBe(200)
    }, 30_000)

    test('mutations with the cookie need this origin; without a live session they are 401', async () => {
      gw = await common()
      const cookie = cookieOf(await signIn())
      const create = (name: string, headers: Record<string, string>) =>
        fetch(`${gw.url}/admin/v1/accounts`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ name }),
        })
      const noOrigin = await create('a1', { cookie })
      expect(noOrigin.status).toBe(403)
      expect(((await noOrigin.json()) as any).error.code).toBe('cross_origin_refused')
      expect((await create('a2', { cookie, origin: 'https://evil.example' })).status).toBe(403)
      expect((await create('a3', { cookie, origin: 'null' })).status).toBe(403)
      expect((await create('a4', { cookie, 'sec-fetch-site': 'cross-site' })).status).toBe(403)
      expect((await create('a5', {})).status).toBe(401)
      expect(
        (await create('a6', { cookie: 'sy_console=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).status,
      ).toBe(401)
      expect((await create('ok1', { cookie, origin: origin() })).status).toBe(200)
      expect((await create('ok2', { cookie, 'sec-fetch-site': 'same-origin' })).status).toBe(200)
      // Of the names tried here, only the two sent from this origin made an account.
      const tried = new Set(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'ok1', 'ok2'])
      const names = (await getJson('/accounts')).body.data.map((a: any) => a.name)
      expect(names.filter((n: string) => tried.has(n))).toEqual(['ok1', 'ok2'])
      // Signing out ends the session on the server, not only in the browser.
      const out = await fetch(`${gw.url}/console/session`, {
        method: 'DELETE',
        headers: { cookie, origin: origin() },
      })
      expect(out.headers.get('set-cookie')).toContain('Max-Age=0')
      expect((await fetch(`${gw.url}/admin/v1/accounts`, { headers: { cookie } })).status).toBe(401)
    }, 30_000)

    test('request log filters and cursor pages; usage series with 429s; live figures; bad parameters are 400', async () => {
      gw = await start()
      const a = await gw.key('alpha', 'free') // rpm 5
      const b = await gw.key('beta', 'pro')
      const statuses: number[] = []
      for (let i = 0; i < 7; i++) statuses.push((await chat(a.key, i === 0)).status)
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429])
      for (let i = 0; i < 2; i++) expect((await chat(b.key, false, 'demo/echo-pro')).status).toBe(200)
      await settle()

      const all = await getJson('/requests?account=alpha')
      expect(all.body.data).toHaveLength(5)
      for (const r of all.body.data)
        expect(r).toMatchObject({ account: 'alpha', status: 200, surface: 'chat' })
      expect(all.body.data[4].stream).toBe(true)
      const ids: number[] = []
      let cursor = ''
      for (let page = 0; page < 5; page++) {
        const p = await getJson(`/requests?account=alpha&limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        ids.push(...p.body.data.map((r: any) => r.id))
        if (!p.body.next_cursor) break
        cursor = p.body.next_cursor
      }
      expect(ids).toEqual(all.body.data.map((r: any) => r.id))
      expect((await getJson('/requests?model=demo/echo-pro')).body.data.map((r: any) => r.account)).toEqual([
        'beta',
        'beta',
      ])
      expect((await getJson(`/requests?key=${b.id}&status=2xx`)).body.data).toHaveLength(2)
      expect((await getJson('/requests?status=5xx')).body.data).toHaveLength(0)
      expect((await getJson('/requests?surface=messages')).body.data).toHaveLength(0)
      expect(
        (await getJson(`/requests?from=${new Date(Date.now() + 60_000).toISOString()}`)).body.data,
      ).toHaveLength(0)
      const one = all.body.data[0]
      expect((await getJson(`/requests/${one.id}`)).body).toEqual(one)
      expect(one).toMatchObject({
        model: 'demo/echo',
        prompt_tokens: expect.any(Number),
        latency_ms: expect.any(Number),
      })
      expect((await getJson('/requests/99999999')).status).toBe(404)
      for (const [q, param] of [
        ['limit=0', 'limit'],
        ['limit=201', 'limit'],
        ['status=abc', 'status'],
        ['cursor=%%%', 'cursor'],
        ['from=yesterday', 'from'],
        // A day that does not exist is refused, not rolled over into March.
        ['to=2026-02-31', 'to'],
      ]) {
        const r = await getJson(`/requests?${q}`)
        expect(r.status).toBe(400)
        expect(r.body.error.param).toBe(param)
      }
      expect((await getJson('/requests?account=nobody')).status).toBe(404)

      const series = await getJson('/usage/series?account=alpha&group_by=model')
      expect(series.body.series).toHaveLength(1)
      const hours = series.body.series[0].points
      expect(hours).toHaveLength(24)
      expect(hours[23]).toMatchObject({ requests: 5, rate_limited: 2, errors: 0 })
      const days = await getJson('/usage/series?bucket=day&group_by=account')
      const byAccount = Object.fromEntries(
        days.body.series.map((s: any) => [s.group, s.points.at(-1).requests]),
      )
      expect(byAccount).toEqual({ alpha: 5, beta: 2 })
      expect((await getJson('/usage/series?bucket=week')).status).toBe(400)
      expect((await getJson('/usage/series?from=2020-01-01T00:00:00Z')).status).toBe(400)

      const live = (await getJson('/live')).body
      expect(live.requests_total).toBeGreaterThanOrEqual(9)
      expect(live.rate_limited_total).toBe(2)
      expect(live.open_streams).toBe(0)
      expect(live.errors_total).toBe(0) // the 429s are counted apart
      expect(live.latency_p50_ms).toBeGreaterThanOrEqual(0)
      expect(live.latency_p99_ms).toBeGreaterThanOrEqual(live.latency_p50_ms)
      expect(live.latency_buckets.at(-1)).toEqual({ le: null, count: expect.any(Number) })
    }, 30_000)

    test('a key holder sees its own account only, and its cookie opens nothing else', async () => {
      gw = await common()
      const mine = await gw.key('mine', 'pro')
      const theirs = await gw.key('theirs', 'pro')
      await chat(mine.key)
      await chat(theirs.key)
      await settle()
      const wrong = await fetch(`${gw.url}/console/me/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: origin() },
        body: JSON.stringify({ key: 'sk-sy-nope' }),
      })
      expect(wrong.status).toBe(401)
      const ok = await fetch(`${gw.url}/console/me/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: origin() },
        body: JSON.stringify({ key: mine.key }),
      })
      expect(ok.headers.get('set-cookie')).toContain('Path=/console/me;')
      const cookie = cookieOf(ok)
      const me = (await (
        await fetch(`${gw.url}/console/me/api/overview`, { headers: { cookie } })
      ).json()) as any
      expect(me.usage.account_information.name).toBe('mine')
      expect(me.recent.map((r: any) => r.account)).toEqual(['mine'])
      expect(JSON.stringify(me)).not.toContain('theirs')
      expect(me.hourly.series[0].points.at(-1).requests).toBe(1)
      expect(
        (
          await fetch(`${gw.url}/admin/v1/accounts`, {
            headers: { cookie: `sy_console=${cookie.split('=')[1]}` },
          })
        ).status,
      ).toBe(401)
      // Revoking the key ends its page.
      await gw.deps.accounts.setKeyState(mine.id, 'revoked')
      const ended = await fetch(`${gw.url}/console/me/api/overview`, { headers: { cookie } })
      expect(ended.status).toBe(401)
      expect(ended.headers.get('cache-control')).toBe('no-store')
      // Without a session at all, the same: the group's guard answers before any route.
      const none = await fetch(`${gw.url}/console/me/api/overview`)
      expect(none.status).toBe(401)
      expect(((await none.json()) as any).error.code).toBe('not_signed_in')
    }, 30_000)
  })
}

test('with no admin token the console is off (404); the key holder page stays', async () => {
  gw = await startGateway({ doc: testConfigDoc({ admin: { token: '' } }) })
  expect((await fetch(`${gw.url}/console`)).status).toBe(404)
  expect((await signIn()).status).toBe(404)
  expect((await fetch(`${gw.url}/console/me`)).status).toBe(200)
})

test('the pages and their assets are served from inside the app: HTML, one script, one stylesheet', async () => {
  gw = await startGateway()
  for (const page of ['/console', '/console/me']) {
    const html = await (await fetch(`${gw.url}${page}`)).text()
    const assets = [...html.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!)
    expect(assets).toHaveLength(2)
    for (const a of assets) {
      const r = await fetch(`${gw.url}${a}`)
      expect(r.status).toBe(200)
      expect((await r.text()).length).toBeGreaterThan(1000)
    }
    expect(html).not.toMatch(/https?:\/\//)
  }
})
