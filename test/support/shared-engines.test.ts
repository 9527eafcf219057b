/**
 * @module
 * The shared PostgreSQL's clones (support/shared-engines.ts, clone-pool.ts): tests started side by
 * side each get a database of their own. Two clone() calls at once once both awaited the one
 * prefetched clone and were handed the same database (a test then met another's account:
 * `account_exists`). A clone a file used is handed out again only as the template left it: no
 * row, sequence value, session (advisory lock, LISTEN) or schema change of the last test's.
 */
import { describe, expect, test } from 'bun:test'
import { skipWithout } from './engines.ts'
import { sharedPostgres } from './shared-engines.ts'

const dbName = (url: string) => new URL(url).pathname.slice(1)

async function databaseExists(name: string): Promise<boolean> {
  const pg = await sharedPostgres()
  try {
    const admin = new Bun.SQL((await pg.createDatabase()).replace(/\/[^/]+$/, '/postgres'), { max: 1 })
    const [row] = await admin`SELECT count(*)::int AS n FROM pg_database WHERE datname = ${name}`
    await admin.close()
    return row.n === 1
  } finally {
    await pg.release()
  }
}

describe.skipIf(skipWithout(['postgres'], 'shared-engines.test.ts'))('sharedPostgres', () => {
  test('clone() calls at once hand out distinct databases', async () => {
    const pg = await sharedPostgres()
    try {
      // After a first clone a prefetched one waits; the next calls at once must not share it.
      const first = await pg.clone()
      const urls = await Promise.all([pg.clone(), pg.clone(), pg.clone()])
      expect(new Set([first, ...urls].map(dbName)).size).toBe(4)
    } finally {
      await pg.release()
    }
  })

  test('a clone used and released is handed out again as the template left it', async () => {
    const used = await sharedPostgres()
    const url = await used.clone()
    // A client the test leaves open: rows, a sequence moved on, a session lock and a LISTEN.
    const left = new Bun.SQL(url, { max: 1 })
    const [account] = await left`
      INSERT INTO accounts (name, plan, plan_started_at, created_at) VALUES ('left', 'free', 0, 0) RETURNING id`
    await left`INSERT INTO api_keys (id, hash, prefix, state, account_id, created_at) VALUES ('k', 'h', 'p', 'enabled', ${account.id}, 0)`
    await left`SELECT nextval('requests_id_seq')`
    await left`SELECT pg_advisory_lock(60)`
    await left`LISTEN pg60`
    const [{ generation }] = await left`SELECT n AS generation FROM auth_generation`
    expect(Number(generation)).toBeGreaterThan(0)
    await used.release()
    // Released, the left client's session is ended, and its user can no longer log in.
    await expect(left`SELECT 1`).rejects.toThrow()

    const next = await sharedPostgres()
    try {
      const again = await next.clone()
      expect(dbName(again)).toBe(dbName(url))
      expect(new URL(again).username).not.toBe(new URL(url).username)
      const late = new Bun.SQL(url, { max: 1 })
      await expect(
        late`INSERT INTO accounts (name, plan, plan_started_at, created_at) VALUES ('late', 'free', 0, 0)`,
      ).rejects.toThrow()
      await late.close().catch(() => {})
      const sql = new Bun.SQL(again, { max: 1 })
      try {
        expect(await sql`SELECT count(*)::int AS n FROM accounts`).toEqual([{ n: 0 }])
        expect(await sql`SELECT count(*)::int AS n FROM api_keys`).toEqual([{ n: 0 }])
        expect(await sql`SELECT id, n::int AS n FROM auth_generation`).toEqual([{ id: 1, n: 0 }])
        const [{ id }] = await sql`
          INSERT INTO accounts (name, plan, plan_started_at, created_at) VALUES ('next', 'free', 0, 0) RETURNING id`
        expect(Number(id)).toBe(1)
        expect(await sql`SELECT nextval('requests_id_seq')::int AS n`).toEqual([{ n: 1 }])
        expect(await sql`SELECT pg_try_advisory_lock(60) AS got`).toEqual([{ got: true }])
        const [{ n: listeners }] = await sql`
          SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()
          AND backend_type = 'client backend' AND usename <> 'postgres' AND pid <> pg_backend_pid()`
        expect(listeners).toBe(0)
      } finally {
        await sql.close()
      }
    } finally {
      await next.release()
      await left.close().catch(() => {})
    }
  })

  test('the clones a file released are the next ones handed out, none lost', async () => {
    const used = await sharedPostgres()
    const first = [await used.clone(), await used.clone(), await used.clone()].map(dbName)
    await used.release()
    const next = await sharedPostgres()
    try {
      const again = [await next.clone(), await next.clone(), await next.clone()].map(dbName)
      expect(new Set(again)).toEqual(new Set(first))
    } finally {
      await next.release()
    }
  })

  test('a clone whose schema a test changed is dropped, not handed out again', async () => {
    for (const change of [
      'ALTER TABLE accounts ADD COLUMN extra INTEGER',
      'CREATE TABLE extra (id INTEGER)',
      'CREATE OR REPLACE FUNCTION switchyard_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$',
      'ALTER TABLE api_keys DISABLE TRIGGER api_keys_auth_update',
    ]) {
      const used = await sharedPostgres()
      const url = await used.clone()
      const sql = new Bun.SQL(url, { max: 1 })
      await sql.unsafe(change)
      await sql.close()
      await used.release()
      // Kept last, it is the first one the next clone() would hand out.
      const next = await sharedPostgres()
      try {
        expect(dbName(await next.clone())).not.toBe(dbName(url))
      } finally {
        await next.release()
      }
      expect(await databaseExists(dbName(url))).toBe(false)
    }
  })

  test("a process's handles share one admin connection, kept open past their release", async () => {
    const adminSessions = async (sql: InstanceType<typeof Bun.SQL>) => {
      const [{ n }] = await sql`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'postgres' AND usename = 'postgres'
        AND backend_type = 'client backend' AND pid <> pg_backend_pid()`
      return n as number
    }
    const handles = [await sharedPostgres(), await sharedPostgres(), await sharedPostgres()]
    for (const pg of handles) await pg.clone()
    const probe = new Bun.SQL(`postgres://postgres@127.0.0.1:${handles[0]!.port}/postgres`, { max: 1 })
    try {
      // One a process (suite-cpu.md, stop 61), not one a handle: three handles, one session.
      expect(await adminSessions(probe)).toBe(1)
      for (const pg of handles) await pg.release()
      expect(await adminSessions(probe)).toBe(1)
    } finally {
      await probe.close()
    }
  })

  test('createDatabase() gives an empty database, dropped on release', async () => {
    const pg = await sharedPostgres()
    const url = await pg.createDatabase()
    const sql = new Bun.SQL(url, { max: 1 })
    expect(await sql`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`).toEqual([
      { n: 0 },
    ])
    await sql.close()
    await pg.release()
    expect(await databaseExists(dbName(url))).toBe(false)
  })
})
