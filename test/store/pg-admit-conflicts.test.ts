/**
 * One admission of a group commit (`switchyard_admit_batch`) that PostgreSQL rolls back for a
 * conflict — a deadlock (40P01), a serialization failure (40001) — is `StoreBusyError`, 503
 * `store_busy`, like a whole call rolled back so (pg-conflicts.test.ts); the other admissions of
 * its batch are admitted. Before schema v15 the function kept only the item's message, and the
 * gateway answered 500. The errors are raised by the server inside the function: a trigger the
 * test puts on `requests` (which every admission writes) fails the insert of the key ids it names.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { DEFAULT_SPANS } from '../../src/limits/types.ts'
import { StoreBusyError } from '../../src/store/index.ts'
import { migratePostgresUrl, openPostgres, PG_LATEST_VERSION } from '../../src/store/postgres/index.ts'
import { MIGRATIONS } from '../../src/store/postgres/migrations.ts'
import { RESERVE_V12 } from '../../src/store/postgres/migrations-v12.ts'
import { ITEM_STATE_V15 } from '../../src/store/postgres/migrations-v15.ts'
import { admission } from '../support/admissions.ts'
import { skipWithout } from '../support/engines.ts'
import { type SharedPostgres, sharedPostgres } from '../support/shared-engines.ts'

const skip = skipWithout(['postgres'], 'pg-admit-conflicts.test.ts (errors raised inside an admission batch)')

const T0 = Date.parse('2026-03-01T10:00:00Z')

/**
 * Fails the admission row of a key id `doomed_<SQLSTATE>` with that SQLSTATE, inside the
 * admission's subtransaction; every other key's row is written, and the top-level transaction
 * that wrote it noted in `test_tx`.
 */
const DOOM = `
CREATE TABLE test_tx (key_id TEXT NOT NULL, tx BIGINT NOT NULL);
CREATE FUNCTION test_doom() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF NEW.key_id LIKE 'doomed\\_%' THEN
    RAISE EXCEPTION 'doomed by the test' USING ERRCODE = substr(NEW.key_id, 8);
  END IF;
  INSERT INTO test_tx VALUES (NEW.key_id, txid_current());
  RETURN NEW;
END
$fn$;
CREATE TRIGGER test_doom BEFORE INSERT ON requests FOR EACH ROW EXECUTE FUNCTION test_doom();`

test('v15 is v12’s switchyard_admit_batch word for word but the created-or-replaced line and the SQLSTATE kept', () => {
  const start = RESERVE_V12.indexOf('CREATE FUNCTION switchyard_admit_batch(')
  const v12 = RESERVE_V12.slice(start, RESERVE_V12.indexOf('$fn$;', start) + '$fn$;'.length)
  const v15 = ITEM_STATE_V15.trim()
  expect(v12.length).toBeGreaterThan(500)
  const changed = (a: string, b: string) =>
    a
      .split('\n')
      .map((line, i) => [line, b.split('\n')[i]])
      .filter(([x, y]) => x !== y)
  expect(v15.split('\n').length).toBe(v12.split('\n').length)
  expect(changed(v12, v15)).toEqual([
    [
      'CREATE FUNCTION switchyard_admit_batch(p_items JSONB, p_minute_ms BIGINT, p_day_ms BIGINT)',
      'CREATE OR REPLACE FUNCTION switchyard_admit_batch(p_items JSONB, p_minute_ms BIGINT, p_day_ms BIGINT)',
    ],
    ['      o_error := SQLERRM;', "      o_error := SQLSTATE || ' ' || SQLERRM;"],
  ])
  // v15's text is the function as it stands: no later migration replaces it.
  const later = MIGRATIONS.filter((m) => m.version > 15)
  expect(later.length).toBe(PG_LATEST_VERSION - 15)
  for (const m of later) expect(m.sql).not.toContain('switchyard_admit_batch')
})

describe.skipIf(skip)('PostgreSQL', () => {
  let pg: SharedPostgres | null = null
  beforeAll(async () => {
    pg = await sharedPostgres()
  }, 60_000)
  afterAll(async () => {
    await pg?.release()
  })

  /** A fresh database migrated to `target`, with one account and the test's trigger. */
  async function database(target?: number) {
    const url = await pg!.createDatabase()
    const applied = await migratePostgresUrl(url, T0, target)
    const sql = new SQL(url, { max: 1 })
    const [a] = await sql`
      INSERT INTO accounts (name, plan, plan_started_at, created_at) VALUES ('acme', 'free', 0, 0) RETURNING id`
    await sql.unsafe(DOOM)
    return { url, sql, applied, accountId: Number(a.id) }
  }

  test('in one batch, the admissions failing with 40P01, 40001 (and 55P03) reject with StoreBusyError, another code with its message and SQLSTATE, and the rest are admitted in the same commit', async () => {
    const { url, sql, accountId } = await database()
    const parts = await openPostgres({
      url,
      poolSize: 2,
      busyTimeoutMs: 5_000,
      windows: DEFAULT_SPANS,
      engineTime: true,
    })
    try {
      const keys = ['key_1', 'doomed_40P01', 'key_2', 'doomed_40001', 'doomed_23514', 'key_3', 'doomed_55P03']
      // Asked for in the same event-loop turn: one call of switchyard_admit_batch.
      const settled = await Promise.allSettled(
        keys.map((keyId, i) => parts.limiter.admit(admission(accountId, T0, { keyId, requestId: `r${i}` }))),
      )
      expect(settled.map((s) => s.status)).toEqual([
        'fulfilled',
        'rejected',
        'fulfilled',
        'rejected',
        'rejected',
        'fulfilled',
        'rejected',
      ])
      const reason = (i: number) => (settled[i] as PromiseRejectedResult).reason as Error
      for (const [i, state] of [
        [1, '40P01'],
        [3, '40001'],
      ] as const) {
        expect(reason(i)).toBeInstanceOf(StoreBusyError)
        expect(reason(i).message).toContain(state)
        expect(reason(i).message).toContain('doomed by the test')
      }
      // A lock refused at once (an operator's lock_timeout) is busy too, as for a whole call.
      expect(reason(6)).toBeInstanceOf(StoreBusyError)
      // An error no retry fixes stays one (a 500, logged), its SQLSTATE said.
      expect(reason(4)).not.toBeInstanceOf(StoreBusyError)
      expect(reason(4).message).toBe('doomed by the test (SQLSTATE 23514)')
      for (const i of [0, 2, 5])
        expect((settled[i] as PromiseFulfilledResult<{ admitted: boolean }>).value.admitted).toBe(true)
      // The three admitted rows, and only they, were committed — by one transaction.
      const rows = await sql`SELECT key_id, seq FROM requests ORDER BY seq`
      expect(rows.map((r: any) => r.key_id)).toEqual(['key_1', 'key_2', 'key_3'])
      expect(rows.map((r: any) => Number(r.seq))).toEqual([1, 2, 3])
      const txs = await sql`SELECT DISTINCT tx FROM test_tx`
      expect(txs.length).toBe(1)
    } finally {
      await parts.close()
      await sql.close()
    }
  }, 60_000)

  test('a v14 schema migrated to v15: the function kept only the message before, its SQLSTATE first after', async () => {
    const { url, sql, applied, accountId } = await database(14)
    try {
      expect(applied).toEqual(Array.from({ length: 14 }, (_, i) => i + 1))
      const items = (request: string) =>
        JSON.stringify([
          {
            i: 0,
            account: accountId,
            key: 'doomed_40P01',
            model: 'demo/echo',
            request,
            gateway: `g_${request}`,
            stream: false,
            now: T0,
          },
          {
            i: 1,
            account: accountId,
            key: 'key_1',
            model: 'demo/echo',
            request,
            gateway: `h_${request}`,
            stream: false,
            now: T0,
          },
        ])
      const batch = (request: string) =>
        sql`SELECT o_index, o_error, o_admitted FROM switchyard_admit_batch(${items(request)}::text::jsonb, 60000, 86400000) ORDER BY o_index`
      const before = await batch('a')
      expect(before.map((r: any) => [r.o_error, r.o_admitted])).toEqual([
        ['doomed by the test', null],
        [null, true],
      ])

      // v15, and every migration after it (none replaces the function: the test above).
      expect(await migratePostgresUrl(url, T0)).toEqual(
        Array.from({ length: PG_LATEST_VERSION - 14 }, (_, i) => i + 15),
      )
      const after = await batch('b')
      expect(after.map((r: any) => [r.o_error, r.o_admitted])).toEqual([
        ['40P01 doomed by the test', null],
        [null, true],
      ])
      const [v] = await sql`SELECT MAX(version)::int AS v FROM schema_migrations`
      expect(v.v).toBe(PG_LATEST_VERSION)

      // The store opens on it, and the conflict is busy.
      const parts = await openPostgres({
        url,
        poolSize: 1,
        busyTimeoutMs: 5_000,
        windows: DEFAULT_SPANS,
        engineTime: true,
      })
      try {
        const err = await parts.limiter
          .admit(admission(accountId, T0, { keyId: 'doomed_40P01' }))
          .catch((e) => e)
        expect(err).toBeInstanceOf(StoreBusyError)
      } finally {
        await parts.close()
      }
    } finally {
      await sql.close()
    }
  }, 60_000)
})
