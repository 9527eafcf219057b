/**
 * The overview's admin endpoints on every backend, with real upstream failures (a local upstream
 * answering 503, a closed local port): today's busiest keys and accounts in order with their
 * names, each provider's upstream errors by code (client-side and shutdown errors apart), bad
 * parameters refused with a 400 naming them, and nothing without the admin token.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { backends } from '../../support/backends.ts'
import {
  ADMIN_TOKEN,
  DEMO_PROVIDER,
  PLANS,
  startGateway,
  type TestGateway,
  testConfigDoc,
} from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'

/** The UTC day `now` falls in, as the API names it (one clock read: two could straddle a millisecond). */
const dayStart = (now: number) => new Date(now - (now % 86_400_000)).toISOString()

let gw: TestGateway
let upstream: ReturnType<typeof Bun.serve>
beforeAll(() => {
  upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => Response.json({ error: { message: 'overloaded', type: 'server_error' } }, { status: 503 }),
  })
})
afterAll(() => upstream.stop(true))
afterEach(async () => {
  await gw?.stop()
})

const model = (name: string) => ({
  name,
  context_window: 8192,
  max_output_tokens: 1024,
  features: ['streaming'],
})
const doc = () =>
  testConfigDoc({
    usage: { flush_ms: 10 },
    providers: [
      // Priced, for the spend figures (USD per 1M tokens).
      {
        ...DEMO_PROVIDER,
        models: DEMO_PROVIDER.models.map((m) => ({ ...m, pricing: { input: 3, output: 15 } })),
      },
      {
        prefix: 'flaky',
        kind: 'openai',
        base_url: `http://127.0.0.1:${upstream.port}/v1`,
        api_key: 'sk-flaky-0123456789',
        models: [model('m1')],
      },
      // A closed local port: every call fails to connect.
      {
        prefix: 'dead',
        kind: 'openai',
        base_url: 'http://127.0.0.1:1/v1',
        api_key: 'sk-dead-0123456789',
        models: [model('m')],
      },
    ],
    plans: {
      ...PLANS,
      all: { rpm: null, rpd: null, models: ['*'] },
      weekly: { rpm: null, rpd: null, models: ['*'], budget: { usd: 5, period: 'week' } },
    },
  })

async function chat(key: string, m: string) {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: m, messages: [{ role: 'user', content: 'hi' }] }),
  })
  await r.text()
  return r.status
}

async function settle() {
  for (let i = 0; i < 100; i++) {
    await gw.deps.recorder.flush()
    const page = await gw.deps.store.requestLog({ limit: 200 })
    if (page.rows.length && page.rows.every((r) => r.status !== null)) return
    await Bun.sleep(20)
  }
  throw new Error('outcomes not stored')
}

const get = async (path: string, auth = true) => {
  const r = await fetch(`${gw.url}/admin/v1${path}`, {
    headers: auth ? { authorization: `Bearer ${ADMIN_TOKEN}` } : {},
  })
  return { status: r.status, body: (await r.json()) as any }
}

for (const backend of backends('console-overview-api.test.ts').filter((b) => b.name !== 'postgres+redis')) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    test('top keys and accounts today, provider health by code, bad parameters, admin only', async () => {
      gw = await startGateway({ doc: doc(), backend: await backend.fresh() })
      const busy = await gw.key('busy-co', 'weekly')
      const mixed = await gw.key('mixed-co', 'all')
      const quiet = await gw.key('quiet-co', 'all')
      for (let i = 0; i < 4; i++) expect(await chat(busy.key, 'demo/echo')).toBe(200)
      expect(await chat(mixed.key, 'demo/echo')).toBe(200)
      // An openai upstream's 503 stays a 503 (DESIGN §10: overloaded, as the other kinds say it).
      for (let i = 0; i < 2; i++) expect(await chat(mixed.key, 'flaky/m1')).toBe(503)
      expect(await chat(quiet.key, 'dead/m')).toBe(502)
      await settle()

      const keys = await get('/overview/top?by=key&limit=10')
      expect(keys.status).toBe(200)
      expect(keys.body.by).toBe('key')
      expect(keys.body.day).toBe(dayStart(Date.now()))
      expect(keys.body.data.map((r: any) => [r.key_id, r.key_name, r.account, r.requests, r.errors])).toEqual(
        [
          [busy.id, 'test', 'busy-co', 4, 0],
          [mixed.id, 'test', 'mixed-co', 3, 2],
          [quiet.id, 'test', 'quiet-co', 1, 1],
        ],
      )
      const two = await get('/overview/top?by=key&limit=2')
      expect(two.body.data.length).toBe(2)
      const accounts = await get('/overview/top?by=account')
      expect(accounts.body.data.map((r: any) => [r.account, r.requests])).toEqual([
        ['busy-co', 4],
        ['mixed-co', 3],
        ['quiet-co', 1],
      ])
      expect(accounts.body.data[0].key_id).toBeUndefined()

      // Spend: the request log's settled cost, per account beside its plan's weekly budget, per key.
      const log = (await gw.deps.store.requestLog({ limit: 200 })).rows
      const cost = (id: string) =>
        log.filter((r) => r.keyId === id).reduce((n, r) => n + (r.costMicros ?? 0), 0) / 1e6
      expect(cost(busy.id)).toBeGreaterThan(cost(mixed.id))
      expect(cost(mixed.id)).toBeGreaterThan(0)
      const spend = (await get('/overview/spend')).body
      expect([spend.today_usd, spend.month_usd]).toEqual([
        Number((cost(busy.id) + cost(mixed.id)).toFixed(6)),
        Number((cost(busy.id) + cost(mixed.id)).toFixed(6)),
      ])
      expect(spend.accounts.map((a: any) => [a.account, a.today_usd, a.budget?.period ?? null])).toEqual([
        ['busy-co', cost(busy.id), 'week'],
        ['mixed-co', cost(mixed.id), null],
      ])
      expect(spend.accounts[0].budget).toMatchObject({ usd: 5, spent_usd: cost(busy.id) })
      expect(spend.keys.map((k: any) => [k.key_id, k.account, k.month_usd])).toEqual([
        [busy.id, 'busy-co', cost(busy.id)],
        [mixed.id, 'mixed-co', cost(mixed.id)],
      ])
      const one = (await get('/overview/spend?account=mixed-co')).body
      expect([one.accounts.length, one.keys.length, one.month_usd]).toEqual([1, 1, cost(mixed.id)])

      const health = await get('/overview/providers')
      expect(health.status).toBe(200)
      expect(health.body.complete).toBe(true)
      expect(health.body.scanned).toBe(8)
      const by = Object.fromEntries(health.body.data.map((p: any) => [p.provider, p]))
      expect(Object.keys(by).sort()).toEqual(['dead', 'demo', 'flaky'])
      expect(health.body.data[0].provider).toBe('flaky') // the most upstream errors first
      expect([by.flaky.requests, by.flaky.upstream_errors, by.flaky.error_rate]).toEqual([2, 2, 1])
      expect(by.flaky.errors_by_code.map((c: any) => [c.code, c.status, c.count])).toEqual([
        ['upstream_overloaded', 503, 2],
      ])
      expect(by.flaky.last_error_at).not.toBeNull()
      expect([by.dead.requests, by.dead.upstream_errors]).toEqual([1, 1])
      expect(by.dead.errors_by_code[0].status).toBe(502)
      expect([
        by.demo.requests,
        by.demo.upstream_errors,
        by.demo.errors_by_code,
        by.demo.last_error_at,
      ]).toEqual([5, 0, [], null])
      expect(by.demo.kind).toBe('demo')

      for (const [path, param] of [
        ['/overview/top?by=model', 'by'],
        ['/overview/top?limit=0', 'limit'],
        ['/overview/top?limit=51', 'limit'],
        ['/overview/top?limit=abc', 'limit'],
        ['/overview/providers?hours=1000', 'hours'],
        ['/overview/providers?hours=-1', 'hours'],
      ] as const) {
        const r = await get(path)
        expect([path, r.status, r.body.error.param]).toEqual([path, 400, param])
        expect(r.body.error.message).toContain(param)
      }
      expect((await get('/overview/top', false)).status).toBe(401)
      expect((await get('/overview/providers', false)).status).toBe(401)
      // The money and upstream figures: an unknown account is a 404 naming it; admin only.
      const unknown = await get('/overview/spend?account=nobody-here')
      expect([unknown.status, unknown.body.error.message]).toEqual([
        404,
        expect.stringContaining('nobody-here'),
      ])
      expect((await get('/overview/upstreams?x=1')).status).toBe(400)
      expect((await get('/overview/spend', false)).status).toBe(401)
      expect((await get('/overview/upstreams', false)).status).toBe(401)
    }, 60_000)
  })
}
