/**
 * The PostgreSQL store's pool (src/store/postgres/pool.ts) opens connections as calls need them,
 * up to `database.pool_size`, and closes those left unused: Bun.SQL alone opens the whole pool at
 * its first query, a backend the server forks for each. Counted by the server itself: the client
 * backends in `pg_stat_activity` for the test's database.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { StoreUnavailableError } from '../../src/store/errors.ts'
import { PgBound } from '../../src/store/postgres/bounded.ts'
import { openPostgres } from '../../src/store/postgres/index.ts'
import { GrowingPool } from '../../src/store/postgres/pool.ts'
import { skipWithout } from '../support/engines.ts'
import { type SharedPostgres, sharedPostgres } from '../support/shared-engines.ts'

const skip = skipWithout(['postgres'], 'pg-pool.test.ts (connections a store opens)')

let pg: SharedPostgres | null = null
let url = ''
let admin: SQL | null = null

/**
 * Connections to the test's database as its clone's role (the shared server's own sessions in the
 * clone, as `postgres`, are not the store's).
 */
async function connections(): Promise<number> {
  const name = new URL(url).pathname.slice(1)
  const [r] = await admin!`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = ${name} AND usename = current_user AND backend_type = 'client backend'`
  return r.n as number
}

/** A backend leaves pg_stat_activity as it exits, a moment after its socket closed. */
async function allClosed(): Promise<number> {
  for (let i = 0; i < 40 && (await connections()) > 0; i++) await Bun.sleep(50)
  return connections()
}

beforeAll(async () => {
  if (skip) return
  pg = await sharedPostgres()
  url = await pg.clone()
  const name = new URL(url).pathname.slice(1)
  admin = new SQL(url.replace(`/${name}`, '/postgres'), { max: 1 })
}, 60_000)
afterAll(async () => {
  await admin?.close()
  await pg?.release()
})

describe.skipIf(skip)('the PostgreSQL pool', () => {
  test('a store of pool_size 10 that runs one call at a time holds one connection', async () => {
    const parts = await openPostgres({
      url,
      poolSize: 10,
      windows: { minuteMs: 60_000, dayMs: 86_400_000 },
      engineTime: true,
    })
    try {
      // Its start's calls (the schema's version, the server's clock) and a few more, in turn.
      for (let i = 0; i < 5; i++) await parts.accounts.listAccounts()
      expect(await connections()).toBe(1)
    } finally {
      await parts.close()
    }
    expect(await allClosed()).toBe(0)
  })

  test('calls at once open a connection each, up to the size; what is left unused closes', async () => {
    // Bun's idleTimeout at 1 s here (60 s in the store: IDLE_S).
    const pool = new GrowingPool(() => new SQL(url, { max: 1, idleTimeout: 1 }), 3)
    try {
      const sleep = (sql: SQL) => sql`SELECT pg_sleep(0.3)`
      await Promise.all([pool.use(sleep), pool.use(sleep)])
      expect(await connections()).toBe(2)
      // Five at once on three: the two past the size wait for the first calls to end.
      await Promise.all(Array.from({ length: 5 }, () => pool.use(sleep)))
      expect(pool.size).toBe(3)
      expect(await connections()).toBe(3)
      // Kept busy one call at a time, the first connection stays; the two others close (at the
      // idleTimeout's 1 s, on Bun's check): kept busy until they have, not for a fixed 2 s.
      const until = Date.now() + 5_000
      while ((await connections()) > 1 && Date.now() < until) await pool.use((sql) => sql`SELECT 1`)
      expect(await connections()).toBe(1)
      // A burst opens them again.
      await Promise.all([pool.use(sleep), pool.use(sleep), pool.use(sleep)])
      expect(await connections()).toBe(3)
    } finally {
      await pool.close()
    }
    expect(await allClosed()).toBe(0)
  })

  test('at the size, a call waits for the first connection to free, not behind a transaction', async () => {
    const pool = new GrowingPool(() => new SQL(url, { max: 1 }), 2)
    const pid = (sql: SQL) => sql`SELECT pg_backend_pid() AS pid`.then(([r]) => r.pid as number)
    const order: string[] = []
    let release = () => {}
    const held = new Promise<void>((r) => {
      release = r
    })
    try {
      // One connection inside a transaction until the test releases it, the other on a short query.
      let txPid = 0
      const tx = pool.use((sql) =>
        sql.begin(async (t) => {
          txPid = await pid(t)
          await held
        }),
      )
      const quick = pool.use(async (sql) => {
        await sql`SELECT pg_sleep(0.05)`
        return pid(sql)
      })
      const third = pool.use(pid).then((p) => {
        order.push('third')
        return p
      })
      // On a pool that pins it behind the transaction it would end only after the release.
      await Promise.race([third, Bun.sleep(10_000)])
      order.push('transaction released')
      release()
      await tx
      expect(order).toEqual(['third', 'transaction released'])
      expect(await third).toBe(await quick)
      expect(await third).not.toBe(txPid)
    } finally {
      release()
      await pool.close()
    }
    expect(await allClosed()).toBe(0)
  }, 20_000)
  test("a call waiting for a connection when another call's deadline gives the pool up: store_unavailable, not a bare error", async () => {
    // No server-side statement_timeout on these connections: the first call outlives the client's deadline.
    const db = new PgBound(() => new GrowingPool(() => new SQL(url, { max: 1 }), 1), 200)
    try {
      const first = db.run((sql) => sql`SELECT pg_sleep(3)`)
      await Bun.sleep(100)
      // At the size: it waits for the first call's connection, and its own deadline is later.
      const waiting = db.run((sql) => sql`SELECT 1 AS n`)
      const [a, b] = await Promise.allSettled([first, waiting])
      expect(a.status === 'rejected' && a.reason).toBeInstanceOf(StoreUnavailableError)
      expect(b.status === 'rejected' && b.reason).toBeInstanceOf(StoreUnavailableError)
    } finally {
      await db.close()
    }
  })
})
