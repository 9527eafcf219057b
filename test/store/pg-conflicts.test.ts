/**
 * What a PostgreSQL call meets when the server rolls its transaction back for a conflict
 * (SQLSTATE class 40) or refuses a lock at once (55P03) is `StoreBusyError` — 503 `store_busy`
 * for a request, a batch put back for the usage flush — never an error no retry fixes. Real errors
 * from a real server: a lock taken with NOWAIT while another session holds it, and a serialization
 * failure raised by the server (the gateway runs no serializable transaction to provoke one). The
 * deadlock itself is test/usage/recorder-deadlock.test.ts.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { StoreBusyError } from '../../src/store/index.ts'
import { PgBound } from '../../src/store/postgres/bounded.ts'
import { GrowingPool } from '../../src/store/postgres/pool.ts'
import { skipWithout } from '../support/engines.ts'
import { type SharedPostgres, sharedPostgres } from '../support/shared-engines.ts'

const skip = skipWithout(['postgres'], 'pg-conflicts.test.ts (errors raised by PostgreSQL)')

let pg: SharedPostgres | null = null
let url = ''
let db: PgBound | null = null
beforeAll(async () => {
  if (skip) return
  pg = await sharedPostgres()
  url = await pg.createDatabase()
  db = new PgBound(() => new GrowingPool(() => new SQL(url, { max: 1 }), 2), 5_000)
  await db.run((sql) => sql`CREATE TABLE t (id INTEGER PRIMARY KEY)`)
  await db.run((sql) => sql`INSERT INTO t VALUES (1)`)
}, 60_000)
afterAll(async () => {
  await db?.close()
  await pg?.release()
})

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => null,
    (err) => err,
  )
}

test.skipIf(skip)(
  'serialization_failure (40001) and deadlock_detected (40P01) raised by the server are busy',
  async () => {
    const raise = {
      '40001': (sql: SQL) => sql`DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$`,
      '40P01': (sql: SQL) => sql`DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40P01'; END $$`,
    }
    for (const [state, run] of Object.entries(raise)) {
      const err = await failure(db!.run(run))
      expect(err).toBeInstanceOf(StoreBusyError)
      expect((err as Error).message).toContain(state)
    }
  },
)

test.skipIf(skip)('lock_not_available (55P03) from a lock another session holds is busy', async () => {
  const other = new SQL(url, { max: 1 })
  await other.begin(async (tx) => {
    await tx`SELECT 1 FROM t WHERE id = 1 FOR UPDATE`
    const err = await failure(db!.run((sql) => sql`SELECT 1 FROM t WHERE id = 1 FOR UPDATE NOWAIT`))
    expect(err).toBeInstanceOf(StoreBusyError)
  })
  await other.close()
})

test.skipIf(skip)('an error a retry does not fix stays as it is', async () => {
  const err = await failure(db!.run((sql) => sql`INSERT INTO t VALUES (1)`))
  expect(err).not.toBeInstanceOf(StoreBusyError)
  expect(String((err as { errno?: unknown }).errno)).toBe('23505')
})
