/**
 * The tokens-and-money store contract (DESIGN §11) on every backend: a key's own limits are
 * stored, read back by every key lookup (the hot path's included), replaced or cleared, and a
 * change moves the authentication generation (another process's cache sees it); each request's
 * cost lands in the log, the per-minute counters (the usage summary) and the rollups; row states
 * read what was used without charging.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { AuthCache } from '../../src/auth/cache.ts'
import { authInvalidating } from '../../src/auth/invalidating-store.ts'
import { parseConfig } from '../../src/config/index.ts'
import type { LimitRow } from '../../src/limits/rows.ts'
import { openStores, type Store } from '../../src/store/index.ts'
import type { Completion, KeyLimits } from '../../src/store/types.ts'
import { newRequestId } from '../../src/util/ids.ts'
import { backendDoc, backends } from '../support/backends.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'

const all = backends('key-limits.test.ts')
const T0 = Date.parse('2026-03-11T10:00:00Z')

async function open(urls: { databaseUrl?: string; redisUrl?: string }): Promise<Store> {
  const path = join(tempDir(), 'limits.db')
  const config = parseConfig(backendDoc(testConfigDoc({ database: { path } }), urls), 'test')
  return openStores(config, { callerTime: true })
}

async function seed(store: Store, limits?: KeyLimits | null) {
  const account = await store.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  const key = await store.createKey({
    id: 'key_a',
    accountId: account.id,
    name: null,
    prefix: 'sk-sy-abc',
    hash: 'hash_a',
    now: T0,
    limits,
  })
  return { account, key }
}

const LIMITS: KeyLimits = {
  rpm: 3,
  rpd: null,
  tpm: 5_000,
  tpd: 90_000,
  budgetMicros: 2_500_000,
  budgetPeriod: 'week',
  models: ['demo/echo', 'demo/other'],
}

for (const b of all) {
  describe.skipIf(b.skip)(`tokens contract on ${b.name}`, () => {
    test('a key created with limits reads them back everywhere; none reads null', async () => {
      const store = await open(await b.fresh())
      const { account, key } = await seed(store, LIMITS)
      expect(key.limits).toEqual(LIMITS)
      expect((await store.getKey('key_a'))!.limits).toEqual(LIMITS)
      expect((await store.findKeyByHash('hash_a'))!.key.limits).toEqual(LIMITS)
      expect((await store.listKeys(account.id))[0]!.limits).toEqual(LIMITS)
      const plain = await store.createKey({
        id: 'key_b',
        accountId: account.id,
        name: null,
        prefix: 'sk-sy-def',
        hash: 'hash_b',
        now: T0,
      })
      expect(plain.limits).toBeNull()
      await store.close()
    })

    test('setKeyLimits replaces and clears them and moves the authentication generation', async () => {
      const store = await open(await b.fresh())
      await seed(store)
      const g0 = await store.authGeneration()
      const set = await store.setKeyLimits('key_a', { ...LIMITS, models: null, tpd: null })
      expect(set.limits).toEqual({ ...LIMITS, models: null, tpd: null })
      const g1 = await store.authGeneration()
      expect(g1).toBeGreaterThan(g0)
      expect((await store.findKeyByHash('hash_a'))!.key.limits!.tpm).toBe(5_000)
      const cleared = await store.setKeyLimits('key_a', null)
      expect(cleared.limits).toBeNull()
      expect(await store.authGeneration()).toBeGreaterThan(g1)
      await store.close()
    })

    test("setKeyLimits through this process's store drops its authentication cache", async () => {
      const inner = await open(await b.fresh())
      await seed(inner)
      let dropped = 0
      const cache = new AuthCache(inner)
      const original = cache.invalidate.bind(cache)
      cache.invalidate = () => {
        dropped++
        original()
      }
      const store = authInvalidating(inner, cache)
      await store.setKeyLimits('key_a', LIMITS)
      expect(dropped).toBe(1)
      await store.close()
    })

    test('cost lands in the log, the usage summary (today, last 24 h, per model) and the rollups', async () => {
      const store = await open(await b.fresh())
      const { account } = await seed(store)
      const done: Completion[] = []
      for (const [i, cost] of [1_250, 2_500, null].entries()) {
        const gatewayId = newRequestId()
        const r = await store.admit({
          accountId: account.id,
          keyId: 'key_a',
          model: 'demo/echo',
          requestId: `r${i}`,
          gatewayId,
          stream: false,
          now: T0 + i,
          rpm: null,
          rpd: null,
          suspension: null,
        })
        if (!r.admitted) throw new Error('refused')
        done.push({
          gatewayId,
          requestId: `r${i}`,
          surface: 'chat',
          stream: false,
          status: 200,
          promptTokens: 10,
          completionTokens: 5,
          latencyMs: 3,
          ttftMs: null,
          errorCode: null,
          costMicros: cost,
          counted: {
            accountId: account.id,
            keyId: 'key_a',
            model: 'demo/echo',
            at: r.loggedAt ?? r.at ?? T0 + i,
          },
        })
      }
      await store.complete(done)
      const summary = await store.usageSummary(account.id, T0 + 10, T0 - (T0 % 86_400_000))
      expect(summary.cost_micros).toEqual({ today: 3_750, last_24h: 3_750, by_model: { 'demo/echo': 3_750 } })
      const page = await store.requestLog({ accountId: account.id, limit: 10 })
      expect(page.rows.map((r) => r.costMicros).sort()).toEqual([1_250, 2_500, null])
      const series = await store.usageSeries({
        bucket: 'hour',
        from: T0 - (T0 % 3_600_000),
        to: T0 + 3_600_000,
        groupBy: 'none',
        accountId: account.id,
      })
      expect(series[0]!.points[0]!.cost_micros).toBe(3_750)
      await store.close()
    })

    test('row states read what each row used, without charging', async () => {
      const store = await open(await b.fresh())
      const { account } = await seed(store)
      for (let i = 0; i < 2; i++) {
        await store.admit({
          accountId: account.id,
          keyId: 'key_a',
          model: 'demo/echo',
          requestId: `r${i}`,
          gatewayId: newRequestId(),
          stream: false,
          now: T0 + i,
          rpm: null,
          rpd: null,
          suspension: null,
        })
      }
      const rows: LimitRow[] = [
        { resource: 'requests', window: 'minute', scope: 'account', capacity: 10 },
        { resource: 'tokens', window: 'day', scope: 'key', capacity: 10 },
        { resource: 'tokens', window: 'minute', scope: 'account', capacity: 1_000 },
        { resource: 'microdollars', window: 'period', period: 'month', scope: 'account', capacity: 10_000 },
      ]
      const q = { accountId: account.id, keyId: 'key_a', now: T0 + 5, rows }
      const states = await store.rowStates(q)
      expect(states.map((s) => s.used)).toEqual([2, 0, 0, 0])
      expect(states.map((s) => s.remaining)).toEqual([8, 10, 1_000, 10_000])
      expect(states[3]!.resetAt).toBe(Date.parse('2026-04-01T00:00:00Z'))
      expect((await store.rowStates(q)).map((s) => s.used)).toEqual([2, 0, 0, 0])
      await store.close()
    })
  })
}
