/**
 * Output reservations that grow (DESIGN §11, `Limiter.extend`) on every backend: a live
 * reservation grows on every token and money row it holds, all or nothing, atomically with other
 * growth (never past a row's capacity, however many grow at once); settlement settles the grown
 * hold to what was used, the sweep settles an abandoned grown hold to itself, and a settled
 * reservation grows no more.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { parseConfig } from '../../src/config/index.ts'
import type { LimitRow } from '../../src/limits/rows.ts'
import type { ChargeRequest, Reservation } from '../../src/limits/types.ts'
import { openStores, type Store } from '../../src/store/index.ts'
import { newRequestId } from '../../src/util/ids.ts'
import { backendDoc, backends } from '../support/backends.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'

const all = backends('extend.test.ts')
// Now, not a fixed date: Redis expires a period's spend at the period's end (plus a day) on its own clock.
const T0 = Date.now()
const TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'account', capacity: 3_000 }
const KEY_TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'key', capacity: 1_000 }
const BUDGET: LimitRow = {
  resource: 'microdollars',
  window: 'period',
  period: 'month',
  scope: 'account',
  capacity: 10_000,
}
/** A day's budget; the edge is the next UTC midnight (Redis expires spend on its own clock, as above). */
const DAY_BUDGET: LimitRow = { ...BUDGET, period: 'day' }
const EDGE = Math.ceil((T0 + 1) / 86_400_000) * 86_400_000 + 86_400_000
/** 1 micro-dollar an input token, 2 an output token. */
const PRICE = { input: 1_000_000, output: 2_000_000 }

async function open(urls: { databaseUrl?: string; redisUrl?: string }) {
  const path = join(tempDir(), 'extend.db')
  const config = parseConfig(backendDoc(testConfigDoc({ database: { path } }), urls), 'test')
  const store: Store = await openStores(config, { callerTime: true })
  const account = await store.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  const accountId = account.id
  const admit = async (charge: ChargeRequest, now = T0) => {
    const gatewayId = newRequestId()
    const r = await store.admit({
      accountId,
      keyId: 'key_1',
      model: 'demo/echo',
      requestId: gatewayId,
      gatewayId,
      stream: true,
      now,
      rpm: null,
      rpd: null,
      suspension: null,
      charge,
    })
    if (!r.admitted) throw new Error('refused')
    return { gatewayId, accountId, at: r.loggedAt ?? r.at ?? now, reservation: r.reservation! }
  }
  const extend = (r: Reservation, rows: LimitRow[], tokens: number, micros: number, now = T0 + 10) =>
    store.extend({ handle: r.handle, accountId, keyId: 'key_1', rows, tokens, micros, now })
  const used = async (rows: LimitRow[], now = T0 + 20) =>
    (await store.rowStates({ accountId, keyId: 'key_1', now, rows })).map((s) => s.used)
  const settle = (a: Awaited<ReturnType<typeof admit>>, tokens: number, micros: number) =>
    store.complete([
      {
        gatewayId: a.gatewayId,
        requestId: a.gatewayId,
        surface: 'chat',
        stream: true,
        status: 200,
        promptTokens: 100,
        completionTokens: tokens - 100,
        latencyMs: 5,
        ttftMs: 1,
        errorCode: null,
        costMicros: micros,
        counted: { accountId, keyId: 'key_1', model: 'demo/echo', at: a.at },
        settlement: { handle: a.reservation.handle, accountId, tokens, micros },
      },
    ])
  return { store, admit, extend, used, settle }
}

for (const b of all) {
  describe.skipIf(b.skip)(`growing reservations on ${b.name}`, () => {
    test('a reservation grows on every row, all or nothing, then settles from the grown hold; settled, it grows no more', async () => {
      const { store, admit, extend, used, settle } = await open(await b.fresh())
      const rows = [TPM, BUDGET]
      const a = await admit({ rows, inputTokens: 100, wantOutput: 200, price: PRICE })
      expect([a.reservation.tokens, a.reservation.micros]).toEqual([300, 500])
      const grown = await extend(a.reservation, rows, 1_000, 2_000)
      expect([grown.tokens, grown.micros]).toEqual([1_000, 2_000])
      expect(grown.states.map((s) => [s.used, s.remaining])).toEqual([
        [1_300, 1_700],
        [2_500, 7_500],
      ])
      expect(await used(rows)).toEqual([1_300, 2_500])
      // All of it held by a request in flight, none of it settled yet.
      const held = await store.rowStates({ accountId: a.accountId, keyId: 'key_1', now: T0 + 20, rows })
      expect(held.map((s) => s.reserved)).toEqual([1_300, 2_500])
      // More than the token row leaves: nothing grows, and the states say what is left.
      const refused = await extend(a.reservation, rows, 1_701, 3_402)
      expect([refused.tokens, refused.micros]).toEqual([0, 0])
      expect(refused.states.map((s) => s.remaining)).toEqual([1_700, 7_500])
      expect(await used(rows)).toEqual([1_300, 2_500])
      // Exactly what is left.
      expect((await extend(a.reservation, rows, 1_700, 3_400)).tokens).toBe(1_700)
      expect(await used(rows)).toEqual([3_000, 5_900])
      // Settled to what was used: the whole grown hold comes off.
      await settle(a, 800, 1_500)
      expect(await used(rows)).toEqual([800, 1_500])
      const late = await extend(a.reservation, rows, 10, 20)
      expect([late.tokens, late.micros, late.states]).toEqual([0, 0, []])
      expect(await used(rows)).toEqual([800, 1_500])
      await store.close()
    })

    test("a key's own row bounds growth as it bounds admission", async () => {
      const { store, admit, extend, used } = await open(await b.fresh())
      const rows = [TPM, KEY_TPM]
      const a = await admit({ rows, inputTokens: 100, wantOutput: 200, price: null })
      expect((await extend(a.reservation, rows, 701, 0)).tokens).toBe(0)
      expect((await extend(a.reservation, rows, 700, 0)).tokens).toBe(700)
      expect(await used(rows)).toEqual([1_000, 1_000])
      await store.close()
    })

    test('growth at once on many reservations never passes the limit and fills it to within one slice', async () => {
      const { store, admit, extend, used } = await open(await b.fresh())
      const rows = [TPM]
      const held = await Promise.all(
        Array.from({ length: 5 }, () => admit({ rows, inputTokens: 100, wantOutput: 200, price: null })),
      )
      const grants = await Promise.all(
        Array.from({ length: 20 }, (_, i) => extend(held[i % 5]!.reservation, rows, 200, 0)),
      )
      // 1,500 held; 7 slices of 200 fit in the 1,500 left, the eighth would pass 3,000.
      expect(grants.filter((g) => g.tokens === 200).length).toBe(7)
      expect(await used(rows)).toEqual([2_900])
      await store.close()
    })

    test('an abandoned reservation (its process killed) is swept at what it grew to, and grows no more', async () => {
      const { store, admit, extend, used } = await open(await b.fresh())
      const rows = [TPM, BUDGET]
      const a = await admit({ rows, inputTokens: 100, wantOutput: 200, price: PRICE })
      await extend(a.reservation, rows, 1_000, 2_000)
      expect(await store.sweepReservations(T0 + 1_000)).toBe(1)
      // Settled to itself, the most it could have cost: its rows keep the grown hold, once.
      expect(await used(rows)).toEqual([1_300, 2_500])
      expect((await extend(a.reservation, rows, 10, 20)).tokens).toBe(0)
      expect(await store.sweepReservations(T0 + 2_000)).toBe(0)
      expect(await used(rows)).toEqual([1_300, 2_500])
      await store.close()
    })

    test("growth after a budget period's edge is checked against, and charged to, the hold's own period", async () => {
      const { store, admit, extend, used } = await open(await b.fresh())
      const rows = [DAY_BUDGET]
      // Two holds of 500 admitted a minute before the UTC day ends: the old day holds 1,000.
      const a = await admit({ rows, inputTokens: 100, wantOutput: 200, price: PRICE }, EDGE - 60_000)
      const c = await admit({ rows, inputTokens: 100, wantOutput: 200, price: PRICE }, EDGE - 60_000)
      // Past the edge both grow on the old day, whose budget they were admitted against.
      expect((await extend(a.reservation, rows, 4_000, 8_000, EDGE + 1_000)).micros).toBe(8_000)
      const refused = await extend(c.reservation, rows, 1_000, 2_000, EDGE + 1_000)
      expect([refused.micros, refused.states.map((s) => s.remaining)]).toEqual([0, [1_000]])
      expect((await extend(c.reservation, rows, 500, 1_000, EDGE + 1_000)).micros).toBe(1_000)
      expect(await used(rows, EDGE - 1)).toEqual([10_000])
      // The new day is free of the old holds.
      expect(await used(rows, EDGE + 2_000)).toEqual([0])
      await store.close()
    })

    test("a key's own budget past the edge, and an old hold once the new period has a charge", async () => {
      const { store, admit, extend, used } = await open(await b.fresh())
      const KEY_DAY: LimitRow = { ...DAY_BUDGET, scope: 'key', capacity: 5_000 }
      const rows = [DAY_BUDGET, KEY_DAY]
      const a = await admit({ rows, inputTokens: 100, wantOutput: 200, price: PRICE }, EDGE - 60_000)
      // The key's old day leaves 4,500, the new day's 5,000 would have taken 5,000.
      const refused = await extend(a.reservation, rows, 2_400, 4_800, EDGE + 1_000)
      expect([refused.micros, refused.states.map((s) => s.remaining)]).toEqual([0, [9_500, 4_500]])
      expect((await extend(a.reservation, rows, 1_000, 2_000, EDGE + 1_000)).micros).toBe(2_000)
      // A charge in the new day. PostgreSQL and Redis keep every period's spend: the old hold grows
      // on what its day leaves. SQLite keeps one counter per period kind, the new day's now: the old
      // day's spend is no longer held, and the old hold grows no more (never over its day's budget).
      await admit({ rows, inputTokens: 100, wantOutput: 200, price: PRICE }, EDGE + 2_000)
      const late = await extend(a.reservation, rows, 500, 1_000, EDGE + 3_000)
      expect(late.micros).toBe(b.name === 'sqlite' ? 0 : 1_000)
      expect(await used(rows, EDGE + 4_000)).toEqual([500, 500])
      await store.close()
    })

    test.skipIf(b.name !== 'postgres+redis')(
      'Redis: a state rebuilt from the database after Redis lost it holds a live reservation at what it grew to',
      async () => {
        const { store, admit, extend, used } = await open(await b.fresh())
        const rows = [TPM]
        const a = await admit({ rows, inputTokens: 100, wantOutput: 200, price: null })
        expect((await extend(a.reservation, rows, 1_000, 0)).tokens).toBe(1_000)
        await b.redis()!.flush()
        // The next admission rebuilds the account from its database rows.
        await admit({ rows, inputTokens: 100, wantOutput: 200, price: null }, T0 + 1)
        expect(await used(rows)).toEqual([1_600])
        await store.close()
      },
    )
  })
}
