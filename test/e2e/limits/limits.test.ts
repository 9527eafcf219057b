import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import OpenAI from 'openai'
import { DAY_MS, ManualClock } from '../../../src/util/clock.ts'
import { type BackendUrls, backends } from '../../support/backends.ts'
import { ADMIN_TOKEN, PLANS, testConfigDoc } from '../../support/config-doc.ts'
import { bearer, startGateway, type TestGateway } from '../../support/gateway.ts'
import { afterEach, beforeEach } from '../../support/hooks.ts'

const T0 = Date.parse('2026-05-01T00:00:00Z')
/** The gateway the running test talks to: its own (`owned`, stopped after it) or its describe's. */
let gw: TestGateway | undefined
let owned: TestGateway | undefined
afterEach(async () => {
  await owned?.stop()
  owned = undefined
  gw = undefined
})

const body = (model = 'demo/echo', extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra })

function chat(key: string, model?: string, extra?: Record<string, unknown>) {
  return fetch(`${gw!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: body(model, extra),
  })
}

/**
 * With an RPM of 2 and an RPD of 3: one request, an hour later the day's last two within one
 * minute, so the minute is full and so is the day; the fourth's 429 waits for the day — the first
 * request leaves it in 23 h less 1 s (the minute would free in 59 s).
 */
async function fillMinuteAndDay(clock: ManualClock, key: string): Promise<Response> {
  expect((await chat(key)).status).toBe(200)
  clock.advance(3_600_000)
  expect((await chat(key)).status).toBe(200)
  clock.advance(1_000)
  expect((await chat(key)).status).toBe(200)
  const r = await chat(key)
  expect(r.status).toBe(429)
  expect(r.headers.get('retry-after')).toBe(String(23 * 3600 - 1))
  return r
}

/** After `fillMinuteAndDay`: at the minute's retry time the day still refuses; at the day's, admitted. */
async function expectAdmittedAtTheDaysRetry(clock: ManualClock, key: string): Promise<void> {
  clock.advance(60_000)
  expect((await chat(key)).status).toBe(429)
  clock.advance(23 * 3600_000 - 1_000 - 60_000)
  expect((await chat(key)).status).toBe(200)
}

test('a database write lock held past busy_timeout → 503 store_busy with retry-after, then normal service', async () => {
  gw = owned = await startGateway({ doc: testConfigDoc({ database: { busy_timeout_ms: 50 } }) })
  const { key } = await gw.key('locked', 'free')
  const other = new Database(join(gw.dir, 'switchyard.db'))
  other.run('BEGIN IMMEDIATE')
  const r = await chat(key)
  expect(r.status).toBe(503)
  expect(r.headers.get('retry-after')).toBe('1')
  expect(((await r.json()) as any).error).toMatchObject({ code: 'store_busy', type: 'api_error' })
  other.run('ROLLBACK')
  other.close()
  expect((await chat(key)).status).toBe(200)
})

// One suite for every backend: SQLite, PostgreSQL, PostgreSQL + Redis.
const allBackends = backends('limits.test.ts')
for (const backend of allBackends) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    /**
     * One gateway (and one fresh database) for the tests whose config it has, started once; a
     * test points `gw` at it. Isolation holds because every test uses accounts and keys of its
     * own (limits, usage, suspension and plan history are per account or key), runs alone (no
     * test.concurrent), and reads the clock only relative to its own first request: the clock
     * the tests share only moves forward, and windows count each account's own requests.
     */
    const shared = (doc: Record<string, unknown>) => {
      const clock = new ManualClock(T0)
      let g: TestGateway | undefined
      beforeAll(async () => {
        g = await startGateway({ doc, clock, backend: await backend.fresh() })
      }, 60_000)
      afterAll(async () => {
        await g?.stop()
      })
      beforeEach(() => {
        gw = g
      })
      return clock
    }

    describe('rate limits', () => {
      const clock = shared(
        testConfigDoc({
          plans: {
            ...PLANS,
            tiny_day: { rpm: null, rpd: 3, models: ['*'] },
            tiny: { rpm: 2, rpd: 3, models: ['*'] },
            roomy: { rpm: 100, rpd: null, models: ['*'] },
          },
        }),
      )

      test('50 concurrent requests on Free (rpm 5) → exactly 5 × 200 and 45 × 429; a second key shares them', async () => {
        const a = await gw!.key('free-acct', 'free')
        const b = await gw!.key('free-acct')
        const res = await Promise.all(Array.from({ length: 50 }, (_, i) => chat(i % 2 ? a.key : b.key)))
        const statuses = res.map((r) => r.status)
        expect(statuses.filter((s) => s === 200)).toHaveLength(5)
        expect(statuses.filter((s) => s === 429)).toHaveLength(45)
        expect((await chat(b.key)).status).toBe(429)
        const limited = res.find((r) => r.status === 429)!
        const err = (await limited.json()) as any
        expect(err.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' })
        expect(err.error.message).toContain('requests per minute (rpm): limit 5')
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
        expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60)
        expect(Number(limited.headers.get('retry-after-ms'))).toBeGreaterThan(0)
        const u = (await (await fetch(`${gw!.url}/v1/usage`, { headers: bearer(a.key) })).json()) as any
        expect(u.rate_limits.minute).toMatchObject({ limit: 5, used: 5, remaining: 0 })
        expect(u.usage.current_minute.requests).toBe(5)
      })

      test('rejected requests consume nothing', async () => {
        const { key } = await gw!.key('careful', 'free')
        for (let i = 0; i < 8; i++) {
          expect((await chat(key, 'demo/echo', { temperature: 'hot' })).status).toBe(400)
          expect((await chat(key, 'demo/echo-pro')).status).toBe(403)
          expect((await chat(key, 'nope/x')).status).toBe(404)
        }
        const ok = await Promise.all(Array.from({ length: 6 }, () => chat(key)))
        expect(ok.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429])
      })

      test('a request refused before admission carries the rate-limit headers, read, nothing spent', async () => {
        const { key } = await gw!.key('refused-hdr', 'free')
        expect((await chat(key)).status).toBe(200)
        clock.advance(15_000)
        const post = (path: string, payload: unknown, headers: Record<string, string> = bearer(key)) =>
          fetch(`${gw!.url}${path}`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify(payload),
          })
        const refusals = [
          await chat(key, 'demo/echo', { temperature: 'hot' }),
          await chat(key, 'demo/echo-pro'),
          await chat(key, 'nope/x'),
          await post('/v1/responses', { model: 'demo/echo', input: 'hi', temperature: 'hot' }),
          await post(
            '/v1/messages',
            { model: 'demo/echo', max_tokens: 'many', messages: [{ role: 'user', content: 'hi' }] },
            { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
          ),
        ]
        expect(refusals.map((r) => r.status)).toEqual([400, 403, 404, 400, 400])
        for (const r of refusals) {
          expect(r.headers.get('x-ratelimit-limit-requests')).toBe('5')
          expect(r.headers.get('x-ratelimit-remaining-requests')).toBe('4')
          expect(r.headers.get('x-ratelimit-reset-requests')).toBe('45s')
          expect(r.headers.get('x-ratelimit-remaining-requests-day')).toBe('99')
          expect(r.headers.get('x-request-id')).toBeTruthy()
        }
        expect(refusals[4]!.headers.get('anthropic-ratelimit-requests-remaining')).toBe('4')
        // count_tokens is never admitted: no rate-limit headers on its refusals either.
        const counted = await post(
          '/v1/messages/count_tokens',
          { model: 'demo/echo', messages: 'hi' },
          { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        )
        expect(counted.status).toBe(400)
        expect(counted.headers.get('x-ratelimit-limit-requests')).toBeNull()
        const next = await chat(key)
        expect(next.headers.get('x-ratelimit-remaining-requests')).toBe('3')
      })

      test('rate-limit headers on non-stream and stream responses', async () => {
        const { key } = await gw!.key('hdr', 'free')
        const first = await chat(key)
        expect(first.status).toBe(200)
        expect(first.headers.get('x-ratelimit-limit-requests')).toBe('5')
        expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('4')
        expect(first.headers.get('x-ratelimit-reset-requests')).toBe('1m0s')
        expect(first.headers.get('x-ratelimit-limit-requests-day')).toBe('100')
        expect(first.headers.get('x-ratelimit-remaining-requests-day')).toBe('99')
        expect(first.headers.get('x-ratelimit-reset-requests-day')).toBe('24h0m0s')
        clock.advance(15_000)
        const stream = await chat(key, 'demo/echo', { stream: true })
        expect(stream.headers.get('content-type')).toContain('text/event-stream')
        expect(stream.headers.get('x-ratelimit-remaining-requests')).toBe('3')
        expect(stream.headers.get('x-ratelimit-reset-requests')).toBe('45s')
        expect(stream.headers.get('x-ratelimit-remaining-requests-day')).toBe('98')
        expect(await stream.text()).toContain('data: [DONE]')
        clock.advance(1_500)
        await chat(key)
        await chat(key)
        await chat(key)
        const limited = await chat(key)
        expect(limited.status).toBe(429)
        // The first request (T0) leaves the window at T0+60s; now is T0+16.5s.
        expect(limited.headers.get('retry-after-ms')).toBe('43500')
        expect(limited.headers.get('retry-after')).toBe('44')
        expect(limited.headers.get('x-ratelimit-remaining-requests')).toBe('0')
        clock.advance(43_500)
        expect((await chat(key)).status).toBe(200)
      })

      test('the day window: 429 naming the day limit', async () => {
        const { key } = await gw!.key('daily', 'tiny_day')
        for (let i = 0; i < 3; i++) {
          expect((await chat(key)).status).toBe(200)
          clock.advance(3_600_000)
        }
        const r = await chat(key)
        expect(r.status).toBe(429)
        expect(((await r.json()) as any).error.message).toContain('requests per day (rpd): limit 3')
        expect(r.headers.get('retry-after')).toBe(String(21 * 3600))
        expect(r.headers.get('x-ratelimit-limit-requests')).toBeNull()
        expect(r.headers.get('x-ratelimit-limit-requests-day')).toBe('3')
      })

      test('both windows full: retry-after until a request would be admitted (the day), naming the day limit', async () => {
        const { key } = await gw!.key('both', 'tiny')
        const r = await fillMinuteAndDay(clock, key)
        expect(((await r.json()) as any).error.message).toContain('requests per day (rpd): limit 3')
        expect(r.headers.get('x-ratelimit-remaining-requests')).toBe('0')
        expect(r.headers.get('x-ratelimit-remaining-requests-day')).toBe('0')
        await expectAdmittedAtTheDaysRetry(clock, key)
      })

      test("a key's own RPM and RPD both full: retry-after until its day admits again, naming the key's rpd", async () => {
        const { id, key } = await gw!.key('keyed', 'roomy')
        await gw!.deps.store.setKeyLimits(id, {
          rpm: 2,
          rpd: 3,
          tpm: null,
          tpd: null,
          budgetMicros: null,
          budgetPeriod: null,
          models: null,
        })
        const r = await fillMinuteAndDay(clock, key)
        expect(((await r.json()) as any).error.message).toContain('requests per day (rpd) of this key')
        await expectAdmittedAtTheDaysRetry(clock, key)
      })
    })

    describe('plan expiry with a moved clock', () => {
      const clock = shared(
        testConfigDoc({
          plans: { ...PLANS, trial: { rpm: 10, rpd: null, models: ['*'], days: 7, on_expiry: 'disable' } },
        }),
      )

      test('downgrade: after the end the target plan’s limits and model access apply', async () => {
        const { key } = await gw!.key('upgrader', 'pro', 30)
        const before = await chat(key, 'demo/echo-pro')
        expect(before.status).toBe(200)
        expect(before.headers.get('x-ratelimit-limit-requests')).toBe('10')
        clock.advance(30 * DAY_MS)
        const denied = await chat(key, 'demo/echo-pro')
        expect(denied.status).toBe(403)
        expect(((await denied.json()) as any).error.code).toBe('model_not_in_plan')
        const after = await chat(key, 'demo/echo')
        expect(after.status).toBe(200)
        expect(after.headers.get('x-ratelimit-limit-requests')).toBe('5')
        expect(after.headers.get('x-ratelimit-limit-requests-day')).toBe('100')
        const u = (await (await fetch(`${gw!.url}/v1/usage`, { headers: bearer(key) })).json()) as any
        expect(u.account_information).toMatchObject({ plan: 'free', is_enabled: true })
        expect(u.subscription_details.history.map((h: { plan: string }) => h.plan)).toEqual(['pro', 'free'])
        // Upgrading again takes effect at once.
        await gw!.deps.accounts.setPlan('upgrader', 'pro', 30)
        expect((await chat(key, 'demo/echo-pro')).status).toBe(200)
      })

      test('disable: 403 plan_expired, is_enabled false, remaining_days 0; set-plan restores at once', async () => {
        const { key } = await gw!.key('trialist', 'trial')
        expect((await chat(key)).status).toBe(200)
        clock.advance(7 * DAY_MS)
        const r = await chat(key)
        expect(r.status).toBe(403)
        expect(((await r.json()) as any).error.code).toBe('plan_expired')
        const u = (await (await fetch(`${gw!.url}/v1/usage`, { headers: bearer(key) })).json()) as any
        expect(u.account_information.is_enabled).toBe(false)
        expect(u.subscription_details).toMatchObject({ plan: 'trial', status: 'expired', remaining_days: 0 })
        const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }
        const renewed = await fetch(`${gw!.url}/admin/v1/accounts/trialist/plan`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({ plan: 'trial', days: 7 }),
        })
        expect(((await renewed.json()) as any).remaining_days).toBe(7)
        expect((await chat(key)).status).toBe(200)
        const again = (await (await fetch(`${gw!.url}/v1/usage`, { headers: bearer(key) })).json()) as any
        expect(again.subscription_details.history.map((h: { reason: string }) => h.reason)).toEqual([
          'created',
          'restarted',
        ])
      })
    })

    describe('suspension', () => {
      const clock = shared(
        testConfigDoc({
          limits: { suspension: { max_rejections: 3, window_s: 60, duration_s: 120 } },
          plans: { ...PLANS, one: { rpm: 1, rpd: null, models: ['*'] } },
        }),
      )

      test('a key that keeps hitting its limit is suspended, shown on /v1/usage, and the admin can lift it', async () => {
        const { key, id } = await gw!.key('hammer', 'one')
        expect((await chat(key)).status).toBe(200)
        for (let i = 0; i < 4; i++) expect((await chat(key)).status).toBe(429)
        const s = await chat(key)
        expect(s.status).toBe(403)
        expect(((await s.json()) as any).error.code).toBe('key_suspended')
        expect(s.headers.get('retry-after')).toBe('120')
        const u = (await (await fetch(`${gw!.url}/v1/usage`, { headers: bearer(key) })).json()) as any
        expect(u.account_information.is_enabled).toBe(false)
        expect(u.account_information.key).toMatchObject({ suspended: true })
        expect(u.account_information.disabled_reason).toBe('key_suspended')
        const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
        const lifted = await fetch(`${gw!.url}/admin/v1/keys/${id}/unsuspend`, {
          method: 'POST',
          headers: admin,
        })
        expect(((await lifted.json()) as any).suspended_until).toBeNull()
        expect((await chat(key)).status).toBe(429)
        clock.advance(60_000)
        expect((await chat(key)).status).toBe(200)
      })

      test('invalid requests count on the same counter as rate-limit refusals (count_invalid)', async () => {
        const { key } = await gw!.key('sloppy', 'one')
        const bad = () =>
          fetch(`${gw!.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { ...bearer(key), 'content-type': 'application/json' },
            body: '{"model": ',
          })
        expect((await chat(key)).status).toBe(200)
        expect((await chat(key)).status).toBe(429)
        for (let i = 0; i < 3; i++) expect((await bad()).status).toBe(400)
        const s = await chat(key)
        expect(s.status).toBe(403)
        expect(((await s.json()) as any).error.code).toBe('key_suspended')
      })
    })
  })
}

/**
 * The official client's retries wait out a real window (1.5 s on the real clock, not the shared
 * manual one): on a gateway of each backend's own (a local, stopped by its test; `gw` and `owned`
 * are not touched), the three side by side (test.concurrent), so the waits overlap.
 */
describe('rate limits: the official openai client', () => {
  // The databases one after the other, before the tests: clone() calls side by side can be handed
  // the same one.
  const databases = new Map<string, BackendUrls>()
  beforeAll(async () => {
    for (const b of allBackends) if (!b.skip) databases.set(b.name, await b.fresh())
  })
  for (const backend of allBackends) {
    ;(backend.skip ? test.skip : test.concurrent)(
      `[${backend.name}] with retries waits retry-after and succeeds when the window frees`,
      async () => {
        const g = await startGateway({
          backend: databases.get(backend.name)!,
          doc: testConfigDoc({
            limits: { minute_window_ms: 1500 },
            plans: { ...PLANS, one: { rpm: 1, rpd: null, models: ['*'] } },
          }),
        })
        try {
          const { key } = await g.key('retrier', 'one')
          const seen: number[] = []
          const client = new OpenAI({
            baseURL: `${g.url}/v1`,
            apiKey: key,
            maxRetries: 3,
            fetch: async (url, init) => {
              const res = await fetch(url, init)
              seen.push(res.status)
              return res
            },
          })
          const first = await client.chat.completions.create({
            model: 'demo/echo',
            messages: [{ role: 'user', content: 'one' }],
          })
          expect(first.choices[0]!.message.content).toContain('one')
          const started = performance.now()
          const second = await client.chat.completions.create({
            model: 'demo/echo',
            messages: [{ role: 'user', content: 'two' }],
          })
          expect(second.choices[0]!.message.content).toContain('two')
          expect(seen[0]).toBe(200)
          expect(seen).toContain(429)
          expect(seen.at(-1)).toBe(200)
          expect(performance.now() - started).toBeGreaterThan(1000)
          const noRetry = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: key, maxRetries: 0 })
          // (openai's APIPromise does not sit well with bun's expect().rejects: catch explicitly.)
          const err = await noRetry.chat.completions
            .create({ model: 'demo/echo', messages: [{ role: 'user', content: 'x' }] })
            .then(
              () => null,
              (e: unknown) => e,
            )
          expect(err).toBeInstanceOf(OpenAI.RateLimitError)
        } finally {
          await g.stop()
        }
      },
    )
  }
})
