/**
 * Prompt-cache tokens per key in the operator's views (DESIGN §14 "cached and cache-write tokens
 * are priced and shown", issue 44): the admin key view (`GET /admin/v1/keys/{id}`'s `usage`), the
 * key's usage series (`/admin/v1/usage/series?key=`) and the spend by account and by key
 * (`/admin/v1/overview/spend`, what the console's keys page and overview show) carry the tokens of
 * `prompt_tokens` read from and written to the provider's cache, per key, on SQLite and on
 * PostgreSQL (each keeps its own hourly and daily rollups). The upstream is a real local server
 * answering as Anthropic does with a cache hit: 100 fresh input tokens, 1,000 read from the
 * cache, 200 written to it, 50 out.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { backends } from '../../support/backends.ts'
import { ADMIN_TOKEN, PLANS, startGateway, type TestGateway } from '../../support/gateway.ts'

const USAGE = {
  input_tokens: 100,
  cache_read_input_tokens: 1000,
  cache_creation_input_tokens: 200,
  output_tokens: 50,
}
/** USD per 1M tokens: 100 × 3 + 1,000 × 0.3 + 200 × 3.75 + 50 × 15 = 2,100 micro-dollars a request. */
const PRICING = { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 }
const COST_USD = 2_100 / 1e6

let upstream: ReturnType<typeof Bun.serve>

beforeAll(() => {
  upstream = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { model: string }
      return Response.json({
        id: 'msg_cache',
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [{ type: 'text', text: 'cached' }],
        stop_reason: 'end_turn',
        usage: USAGE,
      })
    },
  })
})
afterAll(() => upstream.stop(true))

const admin = async (on: TestGateway, path: string) => {
  const r = await fetch(`${on.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  expect(r.status).toBe(200)
  return (await r.json()) as any
}

// PostgreSQL + Redis keeps the rollups in PostgreSQL too: nothing more to see there.
for (const backend of backends('admin-cache-tokens.test.ts').filter((b) => b.name !== 'postgres+redis')) {
  describe.skipIf(backend.skip)(`cache tokens per key [${backend.name}]`, () => {
    let gw: TestGateway
    const ids: Record<string, string> = {}
    beforeAll(async () => {
      gw = await startGateway({
        backend: await backend.fresh(),
        doc: {
          server: { host: '127.0.0.1', port: 0 },
          admin: { token: ADMIN_TOKEN },
          usage: { flush_ms: 10 },
          providers: [
            {
              prefix: 'ant',
              kind: 'anthropic',
              base_url: `http://127.0.0.1:${upstream.port}`,
              api_key: 'sk-ant-cache',
              models: [
                {
                  name: 'claude-c',
                  context_window: 200_000,
                  max_output_tokens: 4096,
                  features: ['streaming', 'system_messages'],
                  pricing: PRICING,
                },
              ],
            },
          ],
          plans: PLANS,
          default_plan: 'unlimited',
        },
      })
      // Two keys of one account: two requests with the first, one with the second.
      for (const [name, n] of [
        ['a', 2],
        ['b', 1],
      ] as const) {
        const k = await gw.key('agents', 'unlimited')
        ids[name] = k.id
        for (let i = 0; i < n; i++) {
          const r = await fetch(`${gw.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'ant/claude-c', messages: [{ role: 'user', content: 'hi' }] }),
          })
          expect(r.status).toBe(200)
          await r.text()
        }
      }
      await gw.deps.recorder.flush()
    })
    afterAll(async () => {
      await gw?.stop()
    })

    test("the admin key view shows the key's cached and cache-write tokens beside its cost", async () => {
      const view = await admin(gw, `/keys/${ids.a}`)
      expect(view.id).toBe(ids.a)
      for (const period of [view.usage.today, view.usage.this_month]) {
        expect(period).toMatchObject({
          requests: 2,
          prompt_tokens: 2 * 1300,
          completion_tokens: 2 * 50,
          cached_tokens: 2 * 1000,
          cache_write_tokens: 2 * 200,
        })
        expect(period.cost_usd).toBeCloseTo(2 * COST_USD, 9)
      }
      const b = await admin(gw, `/keys/${ids.b}`)
      expect(b.usage.today).toMatchObject({ requests: 1, cached_tokens: 1000, cache_write_tokens: 200 })
    })

    test("the key's usage series carries its cache tokens per bucket", async () => {
      const s = await admin(gw, `/usage/series?key=${ids.a}&bucket=hour`)
      const points = s.series.flatMap((x: any) => x.points)
      const sum = (f: string) => points.reduce((n: number, p: any) => n + p[f], 0)
      expect(sum('cached_tokens')).toBe(2 * 1000)
      expect(sum('cache_write_tokens')).toBe(2 * 200)
    })

    test('the spend by key and by account shows the cache tokens (the console reads these)', async () => {
      const spend = await admin(gw, '/overview/spend')
      const key = (id: string) => spend.keys.find((k: any) => k.key_id === id)
      expect(key(ids.a!)).toMatchObject({
        today_cached_tokens: 2000,
        today_cache_write_tokens: 400,
        month_cached_tokens: 2000,
        month_cache_write_tokens: 400,
      })
      expect(key(ids.b!)).toMatchObject({ month_cached_tokens: 1000, month_cache_write_tokens: 200 })
      expect(spend.accounts.find((a: any) => a.account === 'agents')).toMatchObject({
        month_cached_tokens: 3000,
        month_cache_write_tokens: 600,
      })
    })
  })
}
