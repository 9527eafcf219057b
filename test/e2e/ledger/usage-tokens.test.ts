/**
 * `/v1/usage` and `switchyard usage` with tokens and money (DESIGN §11): tpm/tpd, the token windows,
 * the budget that binds (the plan's or the key's own), cost beside every token total, and the key's
 * own limits with what is left of them; the request log and the usage series carry each request's cost.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Backend, backendDoc, backends } from '../../support/backends.ts'
import { cli } from '../../support/cli.ts'
import {
  ADMIN_TOKEN,
  bearer,
  DEMO_PROVIDER,
  startGateway,
  type TestGateway,
  testConfigDoc,
} from '../../support/gateway.ts'

/** $1 per 1M input tokens and $2 per 1M output: 1 and 2 micro-dollars a token. */
function doc() {
  const provider = structuredClone(DEMO_PROVIDER) as any
  provider.models[0].pricing = { input: 1, output: 2 }
  return testConfigDoc({
    providers: [provider],
    usage: { flush_ms: 20 },
    plans: {
      free: { rpm: 5, rpd: 100, models: ['tier:free'] },
      metered: {
        rpm: null,
        rpd: null,
        tpm: 100_000,
        tpd: 1_000_000,
        budget: { usd: 10, period: 'month' },
        models: ['*'],
      },
    },
  })
}

const all = backends('usage-tokens.test.ts')
let gw: TestGateway | undefined
let urls: Awaited<ReturnType<Backend['fresh']>>
/**
 * One gateway and database a backend for the three tests (the same document): each test's
 * accounts are its own, and every figure read is an account's or a key's. A gateway and a database
 * each was 6 more starts (docs/benchmarks/suite-cpu.md, stop 65).
 */
async function start(b: Backend): Promise<TestGateway> {
  if (!gw) {
    urls = await b.fresh()
    gw = await startGateway({ doc: doc(), backend: urls })
  }
  return gw
}

const chat = async (key: string, model: string, content: string) => {
  const res = await fetch(`${gw!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as any).usage as { prompt_tokens: number; completion_tokens: number }
}
const usage = async (key: string) =>
  (await (await fetch(`${gw!.url}/v1/usage`, { headers: bearer(key) })).json()) as any
/** /v1/usage once `requests` were admitted this minute and none holds tokens (flushed, not slept on). */
async function settled(key: string, requests: number): Promise<any> {
  for (let i = 0; ; i++) {
    await gw!.deps.recorder.flush()
    const u = await usage(key)
    const m = u.usage.current_minute
    if ((m.requests >= requests && m.reserved_tokens === 0) || i === 100) return u
    await Bun.sleep(20)
  }
}
const admin = async (path: string) =>
  (await (await fetch(`${gw!.url}/admin/v1${path}`, { headers: bearer(ADMIN_TOKEN) })).json()) as any

for (const b of all)
  describe.skipIf(b.skip)(`/v1/usage with tokens and money on ${b.name}`, () => {
    afterAll(async () => {
      await gw?.stop()
      gw = undefined
    })

    test('limits, windows, the budget, cost per model, and the key’s own limits', async () => {
      const gw = await start(b)
      const { key } = await gw.key('acme', 'metered')
      let micros = 0
      let billed = 0
      for (const word of ['one', 'two two', 'three three three']) {
        const u = await chat(key, 'demo/echo', `hello ${word}`)
        micros += u.prompt_tokens * 1 + u.completion_tokens * 2
        billed += u.prompt_tokens + u.completion_tokens
      }
      const free = await chat(key, 'demo/echo-pro', 'a free model') // no pricing: costs nothing
      billed += free.prompt_tokens + free.completion_tokens
      const u = await settled(key, 4)
      expect(u.rate_limits).toMatchObject({ rpm: null, rpd: null, tpm: 100_000, tpd: 1_000_000 })
      expect(u.rate_limits.tokens_minute).toMatchObject({ limit: 100_000 })
      expect(u.rate_limits.tokens_day).toMatchObject({ limit: 1_000_000 })
      // Settled to what the upstream billed (the reservations let go with the outcomes' flush).
      expect(u.usage.current_minute.tokens).toBe(billed)
      expect(u.usage.current_day.tokens).toBe(billed)
      expect(u.rate_limits.tokens_minute).toMatchObject({ used: billed, remaining: 100_000 - billed })
      expect(u.rate_limits.tokens_day).toMatchObject({ used: billed, remaining: 1_000_000 - billed })
      expect(u.usage.current_minute.requests).toBe(4)

      const now = new Date()
      const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString()
      expect(u.budget).toMatchObject({ usd: 10, period: 'month', resets_at: nextMonth, scope: 'account' })
      expect(u.budget.spent_usd).toBe(micros / 1e6)
      expect(u.budget.remaining_usd).toBe((10_000_000 - micros) / 1e6)

      // Cost beside the token totals, exact to the micro-dollar.
      expect(u.usage.by_model['demo/echo'].cost_usd).toBe(micros / 1e6)
      expect(u.usage.by_model['demo/echo-pro'].cost_usd).toBe(0)
      expect(u.usage.today.cost_usd).toBe(micros / 1e6)
      expect(u.usage.last_24h.cost_usd).toBe(micros / 1e6)
      expect(u.account_information.key.limits).toEqual({
        rpm: null,
        rpd: null,
        tpm: null,
        tpd: null,
        budget: null,
        models: null,
      })

      // The request log and the series carry the same costs.
      const log = await admin('/requests?account=acme')
      const priced = log.data.filter((r: any) => r.model === 'demo/echo')
      expect(priced).toHaveLength(3)
      expect(priced.reduce((a: number, r: any) => a + Math.round(r.cost_usd * 1e6), 0)).toBe(micros)
      expect(log.data.find((r: any) => r.model === 'demo/echo-pro').cost_usd).toBe(0)
      const series = await admin('/usage/series?account=acme&group_by=model')
      const echo = series.series.find((s: any) => s.group === 'demo/echo')
      expect(echo.points.reduce((a: number, p: any) => a + Math.round(p.cost_usd * 1e6), 0)).toBe(micros)

      // The CLI prints the same document (--json) and the new figures as text.
      const config = join(gw.dir, 'usage.yaml')
      writeFileSync(config, JSON.stringify(backendDoc(doc(), urls))) // JSON is YAML
      const base = ['--config', config, '--db', urls.databaseUrl ?? join(gw.dir, 'switchyard.db')]
      const j = (await cli(['usage', 'acme', '--json', ...base])).json()
      expect(j.budget).toMatchObject({ usd: 10, period: 'month', scope: 'account' })
      expect(j.rate_limits.tpm).toBe(100_000)
      expect(j.usage.by_model['demo/echo'].cost_usd).toBe(micros / 1e6)
      const text = (await cli(['usage', 'acme', ...base])).stdout
      expect(text).toMatch(/^tpm\s+100000$/m)
      expect(text).toMatch(/^tpd\s+1000000$/m)
      expect(text).toMatch(/^budget\s+\{"usd":10,"period":"month"/m)
      expect(text).toContain('COST_USD')
    })

    test("what is left of the key's own limits: its requests, tokens and budget beside the account's", async () => {
      const gw = await start(b)
      await gw.deps.accounts.createAccount('acme-own', 'metered')
      const made = await gw.deps.accounts.createKey('acme-own', 'own', {
        rpm: 10,
        tpm: 50_000,
        budget: { usd: 0.5, period: 'day' },
      })
      let billed = 0
      let micros = 0
      for (const word of ['one', 'two two']) {
        const u = await chat(made.key, 'demo/echo', `hello ${word}`)
        billed += u.prompt_tokens + u.completion_tokens
        micros += u.prompt_tokens * 1 + u.completion_tokens * 2
      }
      const u = await settled(made.key, 2)
      const own = u.account_information.key.rate_limits
      expect(own.minute).toMatchObject({ limit: 10, used: 2, remaining: 8 })
      expect(own.minute.resets_in_ms).toBeGreaterThan(0)
      expect(own.day).toBeNull()
      expect(own.tokens_minute).toMatchObject({ limit: 50_000, used: billed, remaining: 50_000 - billed })
      expect(own.tokens_day).toBeNull()
      expect(own.budget).toMatchObject({ usd: 0.5, period: 'day', scope: 'key', spent_usd: micros / 1e6 })
      expect(own.budget.remaining_usd).toBe((500_000 - micros) / 1e6)
      // The account's figures are the account's: the same requests, against its own limits.
      expect(u.rate_limits.tokens_minute).toMatchObject({ limit: 100_000, used: billed })
      // A key without limits of its own: every one null.
      const plain = await gw.deps.accounts.createKey('acme-own', 'plain')
      expect((await usage(plain.key)).account_information.key.rate_limits).toEqual({
        minute: null,
        day: null,
        tokens_minute: null,
        tokens_day: null,
        budget: null,
      })
    })

    test("the key's own budget is the one shown when it leaves less; none: budget null", async () => {
      const gw = await start(b)
      await gw.deps.accounts.createAccount('acme-tight', 'metered')
      const made = await gw.deps.accounts.createKey('acme-tight', 'tight', {
        budget: { usd: 0.5, period: 'day' },
      })
      const u = await usage(made.key)
      expect(u.budget).toMatchObject({
        usd: 0.5,
        period: 'day',
        scope: 'key',
        spent_usd: 0,
        reserved_usd: 0,
        remaining_usd: 0.5,
      })
      expect(u.account_information.key.limits.budget).toEqual({ usd: 0.5, period: 'day' })
      const { key } = await gw.key('hobby', 'free')
      const free = await usage(key)
      expect(free.budget).toBeNull()
      expect(free.rate_limits).toMatchObject({ tpm: null, tpd: null })
      expect(free.rate_limits.tokens_minute).toMatchObject({ limit: null, remaining: null })
      expect(free.usage.current_minute).toEqual({ requests: 0, tokens: 0, reserved_tokens: 0 })
    })
  })
