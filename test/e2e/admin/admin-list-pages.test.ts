/**
 * `GET /admin/v1/accounts` and `GET /admin/v1/keys` are paged as the request log is: `limit`
 * (1–200, default 200) and `cursor` (the previous page's `next_cursor`, null on the last page).
 * Found by an audit: both returned every row in one answer, whatever their number, and
 * `/accounts` ignored any query parameter (`?limit=2` answered everything as if it had worked).
 * Every admin GET route now refuses a parameter it does not take: 400 naming it, as the routes
 * with parameters did already.
 */
import { describe, expect, test } from 'bun:test'
import { backends } from '../../support/backends.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'

const started: TestGateway[] = []
afterEach(async () => {
  for (const g of started.splice(0)) await g.stop().catch(() => {})
})

async function get(gw: TestGateway, path: string, auth = true) {
  const r = await fetch(`${gw.url}/admin/v1${path}`, {
    headers: auth ? { authorization: `Bearer ${ADMIN_TOKEN}` } : {},
  })
  return { status: r.status, body: (await r.json()) as any }
}

/** Every row of a list, `limit` at a time; the pages it took. */
async function all(gw: TestGateway, path: string, limit: number) {
  const rows: any[] = []
  let pages = 0
  let cursor: string | null = null
  do {
    const sep = path.includes('?') ? '&' : '?'
    const r = await get(gw, `${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
    expect(r.status).toBe(200)
    expect(r.body.data.length).toBeLessThanOrEqual(limit)
    rows.push(...r.body.data)
    cursor = r.body.next_cursor
    pages++
  } while (cursor)
  return { rows, pages }
}

for (const backend of backends('admin-list-pages.test.ts').filter((b) => b.name !== 'postgres+redis')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    test('accounts and keys page by limit and cursor, in order, every row once; no limit → up to 200 in one page', async () => {
      const gw = await startGateway({ backend: await backend.fresh() })
      started.push(gw)
      for (const n of ['a1', 'a2', 'a3', 'a4', 'a5']) await gw.deps.accounts.createAccount(n, 'pro')
      // Keys made in the same millisecond are ordered by id: the cursor holds both.
      for (const n of ['a1', 'a2', 'a1', 'a3', 'a1']) await gw.deps.accounts.createKey(n)

      const accounts = await all(gw, '/accounts', 2)
      expect(accounts.rows.map((a) => a.name)).toEqual(['a1', 'a2', 'a3', 'a4', 'a5'])
      expect(accounts.pages).toBe(3)
      const whole = await get(gw, '/accounts')
      expect([whole.body.object, whole.body.data.length, whole.body.next_cursor]).toEqual(['list', 5, null])
      expect(whole.body.data).toEqual(accounts.rows)
      // A page that ends exactly at the end says so.
      expect((await get(gw, '/accounts?limit=5')).body.next_cursor).toBeNull()

      const keys = await all(gw, '/keys', 2)
      const listed = (await gw.deps.accounts.listKeys()).map((k) => k.id)
      expect(keys.rows.map((k) => k.id)).toEqual(listed)
      expect(new Set(listed).size).toBe(5)
      const ofA1 = await all(gw, '/keys?account=a1', 1)
      expect(ofA1.rows.map((k) => k.account)).toEqual(['a1', 'a1', 'a1'])
      expect(ofA1.pages).toBe(3)
      expect((await get(gw, '/keys')).body.next_cursor).toBeNull()
      expect((await get(gw, '/keys?account=nobody')).status).toBe(404)
    }, 60_000)
  })
}

test('without a limit a page holds 200 rows at most: the 201st account is on the next page', async () => {
  const gw = await startGateway()
  started.push(gw)
  for (let i = 0; i < 201; i++) await gw.deps.accounts.createAccount(`n${String(i).padStart(3, '0')}`)
  const first = await get(gw, '/accounts')
  expect(first.body.data.length).toBe(200)
  expect(first.body.next_cursor).toBeString()
  const second = await get(gw, `/accounts?cursor=${first.body.next_cursor}`)
  expect([second.body.data.map((a: any) => a.name), second.body.next_cursor]).toEqual([['n200'], null])
}, 60_000)

describe('what the list routes refuse', () => {
  test('limit outside 1–200, a cursor not from a page, a parameter a route does not take → 400 naming it', async () => {
    const gw = await startGateway()
    started.push(gw)
    await gw.deps.accounts.createAccount('acme', 'pro')
    const k = await gw.deps.accounts.createKey('acme')
    for (const [path, param] of [
      ['/accounts?limit=0', 'limit'],
      ['/accounts?limit=201', 'limit'],
      ['/accounts?limit=1.5', 'limit'],
      ['/keys?limit=abc', 'limit'],
      ['/accounts?cursor=bm9wZQ', 'cursor'],
      ['/keys?cursor=%%%', 'cursor'],
      // A cursor of one list is not one of the other.
      ['/keys?cursor=YS4x', 'cursor'],
      ['/accounts?page=2', 'page'],
      ['/keys?offset=10', 'offset'],
      ['/plans?limit=1', 'limit'],
      ['/accounts/acme?x=1', 'x'],
      ['/accounts/acme/usage?x=1', 'x'],
      [`/keys/${k.id}?x=1`, 'x'],
      ['/sessions?limit=1', 'limit'],
      ['/live?x=1', 'x'],
      ['/models?x=1', 'x'],
    ] as const) {
      const r = await get(gw, path)
      expect([path, r.status, r.body.error?.param]).toEqual([path, 400, param])
    }
    const unknown = await get(gw, '/accounts?limt=5')
    expect(unknown.body.error.message).toBe('limt: not a field of this request; it takes cursor, limit.')
    expect((await get(gw, '/sessions?x=1')).body.error.message).toContain('it takes none')
    // The guard answers first: without the token, a 401 whatever the query.
    expect((await get(gw, '/accounts?limt=5', false)).status).toBe(401)
    expect((await get(gw, '/keys?limit=0', false)).status).toBe(401)
  })
})
