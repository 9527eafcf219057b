/**
 * The authentication cache (src/auth/cache.ts) on real stores: hits do not touch the store, a
 * change through another connection (as another process would make it) is seen once the bound
 * has passed and not trusted beyond it, writes through this process's store apply at once, the
 * generation moves for every write that changes an answer and for none of admission's own
 * bookkeeping, and the cache stays bounded.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { hashKey } from '../../src/accounts/keys.ts'
import { buildDeps } from '../../src/app/build.ts'
import { authenticateToken } from '../../src/auth/authenticate.ts'
import { AUTH_CHECK_MS, AuthCache } from '../../src/auth/cache.ts'
import { authInvalidating } from '../../src/auth/invalidating-store.ts'
import { parseConfig } from '../../src/config/index.ts'
import { openStores, type Store } from '../../src/store/index.ts'
import { ManualClock } from '../../src/util/clock.ts'
import { newRequestId } from '../../src/util/ids.ts'
import { silentLogger } from '../../src/util/log.ts'
import { backendDoc, backends } from '../support/backends.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'

const all = backends('auth-cache.test.ts')
const T0 = 1_800_000_000_000

/** A store on the backend, and a second, independent one on the same data (another process). */
async function pair(urls: { databaseUrl?: string; redisUrl?: string }) {
  const path = join(tempDir(), 'auth.db')
  const config = parseConfig(backendDoc(testConfigDoc({ database: { path } }), urls), 'test')
  const open = () => openStores(config, { callerTime: true })
  return { a: await open(), b: await open() }
}

async function seed(store: Store, name: string) {
  const account = await store.createAccount({
    name,
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  const id = `key_${name}`
  const hash = hashKey(`sk-sy-${name.padEnd(40, 'x')}`)
  const key = await store.createKey({
    id,
    accountId: account.id,
    name: null,
    prefix: 'sk-sy-abc',
    hash,
    now: T0,
  })
  return { account, key, hash }
}

/** Counts the store lookups the cache makes. */
function counting(store: Store) {
  const calls = { find: 0, generation: 0 }
  return {
    calls,
    source: {
      findKeyByHash: (h: string) => {
        calls.find++
        return store.findKeyByHash(h)
      },
      authGeneration: () => {
        calls.generation++
        return store.authGeneration()
      },
    },
  }
}

const admitInput = (accountId: number, keyId: string, i: number) => ({
  accountId,
  keyId,
  model: 'demo/echo',
  requestId: `r${i}`,
  gatewayId: newRequestId(),
  stream: false,
  now: T0 + i,
  rpm: 1,
  rpd: null,
  suspension: { maxRejections: 3, windowMs: 600_000, durationMs: 60_000 },
})

for (const b of all) {
  describe.skipIf(b.skip)(`auth cache on ${b.name}`, () => {
    test('hits do not query the store; a change by another connection applies after the bound, never before its check', async () => {
      const { a, b: other } = await pair(await b.fresh())
      try {
        const { key, hash } = await seed(a, 'acme')
        let t = 0
        const { calls, source } = counting(a)
        const cache = new AuthCache(source, { now: () => t })
        expect((await cache.find(hash))?.key.state).toBe('enabled')
        for (let i = 0; i < 100; i++) {
          t += 1
          expect((await cache.find(hash))?.key.state).toBe('enabled')
        }
        expect(calls).toEqual({ find: 1, generation: 1 })

        // Another process disables the key: within the bound the cached answer may stand ...
        await other.setKeyState(key.id, 'disabled')
        expect((await cache.find(hash))?.key.state).toBe('enabled')
        // ... and from the bound on (counted from the start of the last check) it may not.
        t = AUTH_CHECK_MS
        expect((await cache.find(hash))?.key.state).toBe('disabled')
        expect(calls).toEqual({ find: 2, generation: 2 })

        // The early refresh (past 80% of the bound) runs without holding the request up.
        await other.setKeyState(key.id, 'enabled')
        t += AUTH_CHECK_MS * 0.9
        expect((await cache.find(hash))?.key.state).toBe('disabled')
        await Bun.sleep(50)
        expect(calls.generation).toBe(3)
        expect((await cache.find(hash))?.key.state).toBe('enabled')
      } finally {
        await a.close()
        await other.close()
      }
    })

    test('writes through this process apply to the next lookup; admission suspending the key too', async () => {
      const { a, b: other } = await pair(await b.fresh())
      try {
        const { account, key, hash } = await seed(a, 'acme')
        const cache = new AuthCache(a, { now: () => 0 })
        const store = authInvalidating(a, cache)
        const state = async () => (await cache.find(hash))?.key
        expect((await state())?.state).toBe('enabled')
        await store.setKeyState(key.id, 'disabled')
        expect((await state())?.state).toBe('disabled')
        await store.setKeyState(key.id, 'enabled')
        await store.setAccountEnabled(account.id, false)
        expect((await cache.find(hash))?.account.enabled).toBe(false)
        await store.setAccountEnabled(account.id, true)
        // rpm 1: one admitted, then refusals until the fourth suspends the key.
        let until: number | null = null
        for (let i = 0; i < 6 && until === null; i++) {
          expect((await state())?.suspendedUntil).toBeNull()
          const r = await store.admit(admitInput(account.id, key.id, i))
          if (!r.admitted) until = r.suspendedUntil
        }
        expect(until).not.toBeNull()
        expect((await state())?.suspendedUntil).toBe(until)
        // A write by someone else is not seen without the bound passing (the clock stands still).
        await other.setKeyState(key.id, 'revoked')
        expect((await state())?.state).toBe('enabled')
      } finally {
        await a.close()
        await other.close()
      }
    })

    test('the generation moves for every write that changes an answer, not for admission bookkeeping', async () => {
      const { a, b: other } = await pair(await b.fresh())
      try {
        const { account, key } = await seed(a, 'acme')
        let last = await other.authGeneration()
        const moved = async () => {
          const g = await other.authGeneration()
          const m = g !== last
          last = g
          return m
        }
        // Admissions (the account's sequence, usage counters) and 429s below the suspension
        // threshold (the key's rejection counter) leave it alone.
        for (let i = 0; i < 4; i++) await a.admit(admitInput(account.id, key.id, i))
        expect(await moved()).toBe(false)
        const writes: Array<[string, () => Promise<unknown>]> = [
          ['suspension by admission', () => a.admit(admitInput(account.id, key.id, 4))],
          ['unsuspend', () => a.setKeySuspended(key.id, null)],
          ['disable', () => a.setKeyState(key.id, 'disabled')],
          ['rotate', () => a.rotateKey(key.id, hashKey('sk-sy-rotated'), 'sk-sy-rot', T0)],
          ['account disable', () => a.setAccountEnabled(account.id, false)],
          [
            'plan change',
            () =>
              a.setAccountPlan(account.id, {
                plan: 'pro',
                startedAt: T0,
                expiresAt: null,
                reason: 'x',
                createdAt: T0,
              }),
          ],
          ['new key', () => seed(a, 'beta')],
          ['revoke', () => a.setKeyState(key.id, 'revoked')],
        ]
        for (const [what, write] of writes) {
          await write()
          expect([what, await moved()]).toEqual([what, true])
        }
        // Writing the value a row already has changes no answer.
        await a.setKeyState(key.id, 'revoked')
        expect(await moved()).toBe(false)
      } finally {
        await a.close()
        await other.close()
      }
    })
  })
}

describe('auth cache bounds', () => {
  test('known keys are capped (least recently used go first); unknown hashes have their own cap', async () => {
    const { a } = await pair({})
    try {
      const keys = await Promise.all(['k1', 'k2', 'k3'].map((n) => seed(a, n)))
      const { calls, source } = counting(a)
      const cache = new AuthCache(source, { maxKeys: 2, maxUnknown: 50, now: () => 0 })
      await cache.find(keys[0]!.hash)
      await cache.find(keys[1]!.hash)
      await cache.find(keys[0]!.hash) // k1 is now the most recent
      await cache.find(keys[2]!.hash) // evicts k2
      expect(cache.size.known).toBe(2)
      const before = calls.find
      await cache.find(keys[0]!.hash)
      await cache.find(keys[2]!.hash)
      expect(calls.find).toBe(before)
      await cache.find(keys[1]!.hash)
      expect(calls.find).toBe(before + 1)

      // A flood of made-up keys: each is one lookup, the set stays capped, real keys stay.
      for (let i = 0; i < 1000; i++) expect(await cache.find(hashKey(`sk-sy-nope${i}`))).toBeNull()
      expect(cache.size).toEqual({ known: 2, unknown: 50 })
      const n = calls.find
      expect(await cache.find(hashKey('sk-sy-nope999'))).toBeNull()
      expect((await cache.find(keys[1]!.hash))?.key.id).toBe('key_k2')
      expect(calls.find).toBe(n)
    } finally {
      await a.close()
    }
  })

  test('a lookup that began before an invalidation does not store its (possibly old) answer', async () => {
    const { a } = await pair({})
    try {
      const { key, hash } = await seed(a, 'acme')
      let release = () => {}
      const gate = new Promise<void>((r) => {
        release = r
      })
      const slow = {
        findKeyByHash: async (h: string) => {
          const found = await a.findKeyByHash(h)
          await gate
          return found
        },
        authGeneration: () => a.authGeneration(),
      }
      const cache = new AuthCache(slow, { now: () => 0 })
      const pending = cache.find(hash)
      await Bun.sleep(10)
      await a.setKeyState(key.id, 'disabled')
      cache.invalidate()
      release()
      expect((await pending)?.key.state).toBe('enabled')
      expect(cache.size.known).toBe(0)
      expect((await cache.find(hash))?.key.state).toBe('disabled')
    } finally {
      await a.close()
    }
  })
})

test('time is judged per request, not cached: a suspension ends and a plan expires with the clock', async () => {
  const clock = new ManualClock(T0)
  const config = parseConfig(testConfigDoc({ database: { path: join(tempDir(), 'auth.db') } }), 'test')
  const deps = buildDeps(config, { clock, log: silentLogger })
  try {
    await deps.accounts.createAccount('acme', 'unlimited')
    const { id, key } = await deps.accounts.createKey('acme')
    await deps.store.setKeySuspended(id, T0 + 1_000)
    const code = () =>
      authenticateToken(deps, key).then(
        () => 'ok',
        (e) => e.code as string,
      )
    expect(await code()).toBe('key_suspended')
    expect(deps.authCache.size.known).toBe(1)
    clock.advance(1_000)
    expect(await code()).toBe('ok')
    const account = (await deps.store.getAccount('acme'))!
    await deps.store.setAccountPlan(account.id, {
      plan: 'free',
      startedAt: T0,
      expiresAt: T0 + 5_000,
      reason: 'test',
      createdAt: T0,
    })
    expect(await code()).toBe('ok')
    // free is the default plan: at its end the account is disabled (no write), refused at once.
    clock.advance(4_000)
    expect(await code()).toBe('plan_expired')
  } finally {
    await deps.recorder.flush()
    await deps.store.close()
  }
})

test('a downgrade due at expiry is decided on the stored account: two processes record it once', async () => {
  const clock = new ManualClock(T0)
  const config = parseConfig(testConfigDoc({ database: { path: join(tempDir(), 'auth.db') } }), 'test')
  const [a, b] = [
    buildDeps(config, { clock, log: silentLogger }),
    buildDeps(config, { clock, log: silentLogger }),
  ]
  try {
    await a.accounts.createAccount('acme', 'pro', 1)
    const { key } = await a.accounts.createKey('acme')
    for (const d of [a, b]) expect((await authenticateToken(d, key)).plan.name).toBe('pro')
    clock.advance(86_400_000)
    // Both hold the account on `pro` in their caches; the first downgrades it, the second must not again.
    for (const d of [a, b]) expect((await authenticateToken(d, key)).plan.name).toBe('free')
    const history = await a.store.planHistory((await a.store.getAccount('acme'))!.id)
    expect(history.map((h) => h.plan)).toEqual(['pro', 'free'])
  } finally {
    for (const d of [a, b]) {
      await d.recorder.flush()
      await d.store.close()
    }
  }
})
