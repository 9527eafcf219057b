/**
 * PostgreSQL + Redis: the sweep of reservations nobody settled (RedisSettler.sweep) releases each
 * hold in Redis, then marks its row settled in PostgreSQL — two stores, two steps. Between them a
 * reader of the row (`rowStates`, `/v1/usage`) finds the hold released while the row still reads
 * unsettled; a second sweep run then (another replica's, or a test's) must neither settle them
 * again nor say it did. And an account whose state Redis lost reads its holds as a rebuild would
 * hold them: from the database's reservations in flight. On real engines, made deterministic with
 * a PostgreSQL row lock that holds the first sweep between its two steps.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { parseConfig } from '../../src/config/index.ts'
import type { LimitRow } from '../../src/limits/rows.ts'
import type { ChargeRequest } from '../../src/limits/types.ts'
import { openStores, type Store } from '../../src/store/index.ts'
import { admission } from '../support/admissions.ts'
import { TEST_POOL_SIZE } from '../support/backends.ts'
import { testConfigDoc } from '../support/config-doc.ts'
import { skipWithout } from '../support/engines.ts'
import {
  type SharedPostgres,
  type SharedRedis,
  sharedPostgres,
  sharedRedis,
} from '../support/shared-engines.ts'

const skip = skipWithout(['postgres', 'redis'], 'redis-sweep.test.ts')
let pg: SharedPostgres
let redis: SharedRedis
beforeAll(async () => {
  if (skip) return
  pg = await sharedPostgres()
  redis = await sharedRedis()
}, 60_000)
afterAll(async () => {
  await pg?.release()
})

const TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'account', capacity: 1_000_000 }
/** 100 input + 300 output tokens: 400 reserved each. */
const CHARGE: ChargeRequest = { rows: [TPM], inputTokens: 100, wantOutput: 300, price: null }
const N = 8

/**
 * A fresh database and Redis, a store on them and an account with N reservations in flight.
 * `poolSize`: the stores' connections. The suite's two, but where an admission rebuilds the
 * account while a sweep is held at its UPDATE: the config's default (10) there, as the held sweep
 * keeps one connection while the rebuild runs its reads at once (with two it waited past the
 * test). Each connection is a backend forked when a call needs it (suite-cpu.md, stop 63).
 */
async function inFlight(poolSize: number = TEST_POOL_SIZE) {
  const url = await pg.clone()
  await redis.flush()
  const open = (): Promise<Store> => {
    const doc = testConfigDoc({ limits: { redis_url: redis.url, reservation_ttl_s: 1 } })
    return openStores(parseConfig({ ...doc, database: { url, pool_size: poolSize } }, 'test'))
  }
  const store = await open()
  const now = Date.now()
  const { id } = await store.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: now,
    planExpiresAt: null,
    now,
  })
  for (let i = 0; i < N; i++) {
    const r = await store.admit(admission(id, Date.now(), { charge: CHARGE }))
    if (!r.admitted) throw new Error('refused')
  }
  const row = async (s: Store = store) =>
    (await s.rowStates({ accountId: id, keyId: 'key_1', now: Date.now(), rows: [TPM] }))[0]!
  return { url, open, store, row }
}

describe.skipIf(skip)('the Redis sweep between its two stores', () => {
  test('a sweep run while another is between Redis and PostgreSQL settles nothing twice and says it swept none', async () => {
    const { url, open, store, row } = await inFlight()
    const other = await open()
    expect(await row()).toMatchObject({ used: N * 400, reserved: N * 400 })
    // The rows locked: the first sweep reads them (a plain read does not wait), releases their
    // holds in Redis, and waits at its UPDATE — between its two steps.
    const sql = new Bun.SQL(url, { max: 2 })
    let unlock!: () => void
    const locked = new Promise<void>((resolve) => {
      void sql.begin(async (tx) => {
        await tx`SELECT gateway_id FROM requests WHERE NOT settled FOR UPDATE`
        resolve()
        await new Promise<void>((r) => {
          unlock = r
        })
      })
    })
    await locked
    const waiting = async (n: number) => {
      for (let i = 0; i < 500; i++) {
        const [w] = await sql`
          SELECT COUNT(*)::int AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE requests SET settled = TRUE%'`
        if (w.n >= n) return
        await Bun.sleep(10)
      }
      throw new Error(`${n} sweeps never reached their UPDATE`)
    }
    const first = store.sweepReservations(Date.now() + 1)
    await waiting(1)
    // Redis has released every hold (settled to itself: the window keeps the tokens); PostgreSQL
    // still calls them unsettled. The row reads what Redis, the ledger admissions use, holds.
    expect(await row()).toMatchObject({ used: N * 400, reserved: 0 })
    const [open8] = await sql`SELECT COUNT(*)::int AS n FROM requests WHERE NOT settled`
    expect(open8.n).toBe(N)
    // Another sweep now reads the same rows unsettled; it releases nothing in Redis (the settle
    // script deletes each hold once) and must not count them.
    const second = other.sweepReservations(Date.now() + 1)
    await waiting(2)
    unlock()
    expect(await first).toBe(N)
    expect(await second).toBe(0)
    // Settled once, to themselves: the window keeps the reserved tokens, nothing held, nothing left.
    expect(await row()).toMatchObject({ used: N * 400, reserved: 0 })
    const [left] = await sql`SELECT COUNT(*)::int AS n FROM requests WHERE NOT settled`
    expect(left.n).toBe(0)
    expect(await store.sweepReservations(Date.now() + 1)).toBe(0)
    await sql.close()
    await other.close()
    await store.close()
  }, 30_000)

  test('Redis lost the account: its holds read from the database; the sweep settles each once, by marking its row', async () => {
    const { store, open, row } = await inFlight()
    const other = await open()
    // Redis restarted without its data: no marker, no holds; the database's rows are the ledger.
    const c = new Bun.RedisClient(redis.url)
    await c.send('FLUSHALL', [])
    c.close()
    expect(await row()).toMatchObject({ used: N * 400, reserved: N * 400 })
    // Two sweeps at once (two replicas): each reservation settled, and counted, once.
    const swept = await Promise.all([
      store.sweepReservations(Date.now() + 1),
      other.sweepReservations(Date.now() + 1),
    ])
    expect(swept[0]! + swept[1]!).toBe(N)
    // Settled to themselves: the window keeps them, nothing held.
    expect(await row()).toMatchObject({ used: N * 400, reserved: 0 })
    expect(await store.sweepReservations(Date.now() + 1)).toBe(0)
    await other.close()
    await store.close()
  }, 30_000)

  test('Redis lost the account and an admission rebuilds it while the sweep is between its two steps: each reservation settled and counted once', async () => {
    const { url, store, row } = await inFlight(10)
    const c = new Bun.RedisClient(redis.url)
    await c.send('FLUSHALL', [])
    c.close()
    const sql = new Bun.SQL(url, { max: 2 })
    let unlock!: () => void
    await new Promise<void>((resolve) => {
      void sql.begin(async (tx) => {
        await tx`SELECT gateway_id FROM requests WHERE NOT settled FOR UPDATE`
        resolve()
        await new Promise<void>((r) => {
          unlock = r
        })
      })
    })
    // The sweep finds no hold in Redis (no state: answer "unheld") and waits at its UPDATE.
    const first = store.sweepReservations(Date.now() + 1)
    for (let i = 0; i < 500; i++) {
      const [w] = await sql`
        SELECT COUNT(*)::int AS n FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE requests SET settled = TRUE%'`
      if (w.n >= 1) break
      await Bun.sleep(10)
    }
    // An admission meanwhile rebuilds the account from the database, whose rows are still
    // unsettled: their holds are back in Redis.
    const accountId = (await store.getAccount('acme'))!.id
    expect((await store.admit(admission(accountId, Date.now(), { charge: CHARGE }))).admitted).toBe(true)
    unlock()
    // Counted once (it read 2 × N: the sweep counted the rows it marked, and its reconcile the
    // rebuilt holds again), and released once: only the new admission is held.
    expect(await first).toBe(N)
    expect(await row()).toMatchObject({ used: (N + 1) * 400, reserved: 400 })
    expect(await store.sweepReservations(Date.now() - 60_000)).toBe(0)
    await sql.close()
    await store.close()
  }, 30_000)
})
