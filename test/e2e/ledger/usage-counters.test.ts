/**
 * `GET /v1/usage` answers from per-minute counters kept at admission and completion, not from a
 * scan of the request log. Its figures must still be exactly what the log says, as the clock
 * walks across minute, hour, UTC-midnight and 24-hour boundaries. (Its speed at 2,000,000
 * requests is a `bun run bench` row, not a timed test.)
 */
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import type { AuthInvalidatingStore } from '../../../src/auth/invalidating-store.ts'
import type { SqliteStore } from '../../../src/store/index.ts'
import { ManualClock } from '../../../src/util/clock.ts'
import { type BackendUrls, backends } from '../../support/backends.ts'
import { DEMO_PROVIDER, PLANS, testConfigDoc } from '../../support/config-doc.ts'
import { bearer, startGateway, type TestGateway } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'

let gw: TestGateway | undefined
/** The test's own connection to the gateway's PostgreSQL database: one a test, not one a read (each is a backend the server forks). */
let view: SQL | undefined
afterEach(async () => {
  await gw?.stop()
  gw = undefined
  await view?.close()
  view = undefined
})

/** An OpenAI-compatible provider on a closed local port: every call is a 502, counted as an error. */
const DEAD_PROVIDER = {
  prefix: 'dead',
  kind: 'openai',
  base_url: 'http://127.0.0.1:9/v1',
  api_key: 'unused',
  models: [{ name: 'm', context_window: 4096, max_output_tokens: 256, features: ['streaming'] }],
}

const MINUTE = 60_000
const DAY = 86_400_000

function chat(key: string, model: string, stream: boolean, content: string) {
  return fetch(`${gw!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content }] }),
  }).then(async (r) => {
    await r.arrayBuffer()
    return r.status
  })
}

interface Totals {
  requests: number
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  errors: number
  cost_usd: number
  /** Requests whose tokens are the gateway's settled estimate (the log's `estimated` flag). */
  estimated_requests: number
  /** Prompt-cache reads and writes: the request log has no column for them, and the demo caches nothing. */
  cached_tokens: number
  cache_write_tokens: number
}

/** The request log of whichever backend the gateway runs on, read directly. */
type LogRow = { model: string; requests: number; p: number; c: number; e: number; m: number; s: number }
async function logRows(urls: BackendUrls, accountId: number, from: number): Promise<LogRow[]> {
  if (!urls.databaseUrl) {
    return ((gw!.deps.store as AuthInvalidatingStore).inner as SqliteStore).db
      .query<LogRow, [number, number]>(
        `SELECT model, COUNT(*) AS requests, COALESCE(SUM(prompt_tokens), 0) AS p,
                COALESCE(SUM(completion_tokens), 0) AS c, COALESCE(SUM(status >= 400), 0) AS e,
                COALESCE(SUM(cost_micros), 0) AS m, COALESCE(SUM(estimated), 0) AS s
         FROM requests WHERE account_id = ? AND created_at >= ? GROUP BY model`,
      )
      .all(accountId, from)
  }
  view ??= new SQL(urls.databaseUrl, { max: 1 })
  const rows = await view`
    SELECT model, COUNT(*)::int AS requests, COALESCE(SUM(prompt_tokens), 0)::int AS p,
      COALESCE(SUM(completion_tokens), 0)::int AS c, (COUNT(*) FILTER (WHERE status >= 400))::int AS e,
      COALESCE(SUM(cost_micros), 0)::int AS m, (COUNT(*) FILTER (WHERE estimated))::int AS s
    FROM requests WHERE account_id = ${accountId} AND created_at >= ${from} GROUP BY model`
  return [...rows] as LogRow[]
}

/** What the request log says: totals per model of the account's requests admitted since `from`. */
async function fromLog(
  urls: BackendUrls,
  accountId: number,
  from: number,
): Promise<{ all: Totals; byModel: Record<string, Totals> }> {
  const rows = await logRows(urls, accountId, from)
  const all: Totals = {
    requests: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    errors: 0,
    cost_usd: 0,
    estimated_requests: 0,
    cached_tokens: 0,
    cache_write_tokens: 0,
  }
  const byModel: Record<string, Totals> = {}
  for (const r of rows) {
    const t = {
      requests: r.requests,
      prompt_tokens: r.p,
      completion_tokens: r.c,
      total_tokens: r.p + r.c,
      errors: r.e,
      cost_usd: r.m / 1e6,
      estimated_requests: r.s,
      cached_tokens: 0,
      cache_write_tokens: 0,
    }
    byModel[r.model] = t
    for (const k of Object.keys(all) as Array<keyof Totals>) all[k] += t[k]
  }
  return { all, byModel }
}

async function inWindow(urls: BackendUrls, accountId: number, now: number, span: number): Promise<number> {
  const rows = await logRows(urls, accountId, now - span + 1)
  return rows.reduce((n, r) => n + r.requests, 0)
}

for (const backend of backends('usage-counters.test.ts')) {
  describe.skipIf(backend.skip)(`/v1/usage counters [${backend.name}]`, () => {
    test('equal what the request log says, across minutes, UTC midnight and the 24-hour window', async () => {
      const clock = new ManualClock(Date.parse('2026-05-01T23:40:17.250Z'))
      const urls = await backend.fresh()
      gw = await startGateway({
        clock,
        backend: urls,
        doc: testConfigDoc({
          providers: [DEMO_PROVIDER, DEAD_PROVIDER],
          plans: { ...PLANS, metered: { rpm: 1000, rpd: 100_000, models: ['*'] } },
        }),
      })
      const { key } = await gw.key('counted', 'metered')
      const accountId = (await gw.deps.store.getAccount('counted'))!.id
      // Clock steps chosen to land inside, on and across minute, midnight and day boundaries.
      const steps = [
        0,
        13_000,
        47_500,
        61_000,
        5 * MINUTE,
        20 * MINUTE,
        1_000,
        6 * 3_600_000,
        17 * 3_600_000 + 59_000,
      ]
      steps.push(MINUTE, 90_000, 23 * 3_600_000, DAY, 2 * MINUTE)
      let checks = 0
      for (const [i, step] of steps.entries()) {
        clock.advance(step)
        const sent = await Promise.all([
          chat(key, 'demo/echo', false, `step ${i} `.repeat(i + 1)),
          chat(key, 'demo/echo-pro', true, 'streamed '.repeat(2 * i + 3)),
          ...(i % 3 === 0 ? [chat(key, 'dead/m', false, 'x'), chat(key, 'dead/m', true, 'y')] : []),
        ])
        expect(sent.filter((s) => s === 200)).toHaveLength(2)
        await gw.deps.recorder.flush()

        const now = clock.now()
        const res = await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })
        expect(res.status).toBe(200)
        const u = ((await res.json()) as any).usage
        const rl = ((await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any)
          .rate_limits
        const dayStart = now - (now % DAY)
        const today = await fromLog(urls, accountId, dayStart)
        const last24h = await fromLog(urls, accountId, (Math.floor(now / MINUTE) - 1439) * MINUTE)
        expect(u.today).toEqual(today.all)
        expect(u.by_model).toEqual(today.byModel)
        expect(u.last_24h).toEqual(last24h.all)
        expect(rl.minute.used).toBe(await inWindow(urls, accountId, now, MINUTE))
        expect(rl.day.used).toBe(await inWindow(urls, accountId, now, DAY))
        expect(u.current_day.requests).toBe(rl.day.used)
        checks++
      }
      expect(checks).toBe(steps.length)
      // The walk really did roll over: yesterday's requests left `today`, and errors were counted.
      const total = (await fromLog(urls, accountId, 0)).all
      const u = ((await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any).usage
      expect(u.today.requests).toBeLessThan(total.requests)
      expect(total.errors).toBeGreaterThan(0)
      expect(total.completion_tokens).toBeGreaterThan(0)
    })
  })
}

describe('/v1/usage is throttled per key', () => {
  test('20 at once, then 429 with retry-after; one more a second; other keys unaffected', async () => {
    const clock = new ManualClock(Date.parse('2026-05-01T12:00:00Z'))
    gw = await startGateway({ clock })
    const a = await gw.key('poller', 'free')
    const b = await gw.key('poller')
    const get = (key: string) => fetch(`${gw!.url}/v1/usage`, { headers: bearer(key) })
    for (let i = 0; i < 20; i++) expect((await get(a.key)).status).toBe(200)
    const r = await get(a.key)
    expect(r.status).toBe(429)
    expect(r.headers.get('retry-after')).toBe('1')
    expect(r.headers.get('retry-after-ms')).toBe('1000')
    expect(((await r.json()) as any).error).toMatchObject({
      code: 'rate_limit_exceeded',
      type: 'rate_limit_error',
    })
    expect((await get(b.key)).status).toBe(200)
    clock.advance(1000)
    expect((await get(a.key)).status).toBe(200)
    expect((await get(a.key)).status).toBe(429)
  })
})
