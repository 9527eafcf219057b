/**
 * Schema v5 (both engines) keys usage rows by the gateway's request id: rows written before it
 * get an id of their own (their x-request-ids may repeat), outcomes are then written by it, and
 * new admissions get fresh ids next to them.
 */

import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SQL } from 'bun'
import { parseConfig } from '../../src/config/index.ts'
import { openSqliteStore, openStores } from '../../src/store/index.ts'
import { migratePostgresUrl, PG_LATEST_VERSION } from '../../src/store/postgres/index.ts'
import { migrate } from '../../src/store/sqlite/migrations.ts'
import type { AdmitInput, Completion } from '../../src/store/types.ts'
import { newRequestId } from '../../src/util/ids.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { skipWithout } from '../support/engines.ts'
import { sharedPostgres } from '../support/shared-engines.ts'

const T0 = Date.parse('2026-03-01T10:00:00Z')

const outcome = (gatewayId: string, completionTokens: number, at = T0 + 2): Completion => ({
  gatewayId,
  requestId: 'dup',
  surface: 'chat',
  stream: false,
  counted: { accountId: 1, keyId: 'k', model: 'x/a', at },
  status: 200,
  promptTokens: 1,
  completionTokens,
  latencyMs: 5,
  ttftMs: null,
  errorCode: null,
})

const admission = (accountId: number, keyId: string): AdmitInput => ({
  accountId,
  keyId,
  model: 'x/a',
  requestId: 'dup',
  gatewayId: newRequestId(),
  stream: false,
  now: T0 + 60_000,
  rpm: null,
  rpd: null,
  suspension: null,
})

test('SQLite: rows from before v5 get distinct gateway ids; a new request is logged once, with its own', async () => {
  const path = join(tempDir(), 'db.sqlite')
  // The database as v4 left it.
  const db = new Database(path, { create: true, strict: true })
  migrate(db, T0, 4)
  db.run("INSERT INTO accounts (id, name, plan, plan_started_at, created_at) VALUES (1, 'a', 'free', 0, 0)")
  const insert = db.query(
    `INSERT INTO requests (request_id, account_id, key_id, model, stream, created_at, seq)
     VALUES ('dup', 1, 'k', 'x/a', 0, ?, ?)`,
  )
  for (let i = 1; i <= 3; i++) insert.run(T0 + i, i)
  // Older than a day before the newest row: in no window, not carried over to the limiter.
  insert.run(T0 - 90_000_000, 0)
  db.close()

  const store = openSqliteStore({ path, now: T0 })
  const ids = store.db
    .query<{ id: number; gateway_id: string }, []>('SELECT id, gateway_id FROM requests ORDER BY id')
    .all()
  expect(ids.map((r) => r.gateway_id)).toEqual(ids.map((r) => `legacy_${r.id}`))
  expect(store.db.query('SELECT COUNT(*) AS n FROM admissions').get()).toEqual({ n: 3 })
  const admitted = await store.admit(admission(1, 'k'))
  if (!admitted.admitted) throw new Error('not admitted')
  // v6 carried the last day's rows over to the limiter: the new admission numbers after them.
  expect((await store.windows(1, T0 + 60_000, null, 10)).day.used).toBe(4)
  // Admission writes no log row; the outcome writes it, complete, once.
  expect(store.db.query('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 4 })
  await store.complete([outcome(admitted.gatewayId, 7, admitted.loggedAt)])
  const rows = store.db
    .query<{ gateway_id: string; completion_tokens: number | null; status: number | null }, []>(
      'SELECT gateway_id, completion_tokens, status FROM requests ORDER BY id',
    )
    .all()
  expect(rows.map((r) => r.completion_tokens)).toEqual([null, null, null, null, 7])
  expect(rows[4]).toEqual({ gateway_id: admitted.gatewayId, completion_tokens: 7, status: 200 })
  store.close()
})

describe.skipIf(skipWithout(['postgres'], 'gateway-id-migration.test.ts on PostgreSQL'))('PostgreSQL', () => {
  test('rows from before v5 get distinct gateway ids; outcomes and new admissions use them', async () => {
    const pg = await sharedPostgres()
    try {
      const url = await pg.createDatabase()
      expect(await migratePostgresUrl(url, T0, 4)).toEqual([1, 2, 3, 4])
      const sql = new SQL(url, { max: 1 })
      const [a] = await sql`
        INSERT INTO accounts (name, plan, plan_started_at, created_at) VALUES ('a', 'free', 0, 0) RETURNING id`
      await sql`INSERT INTO api_keys (id, account_id, prefix, hash, state, created_at)
        VALUES ('k', ${a.id}, 'sk-sy-aaaaaa', 'h', 'enabled', 0)`
      for (let i = 1; i <= 3; i++)
        await sql`INSERT INTO requests (request_id, account_id, key_id, model, stream, created_at, seq)
          VALUES ('dup', ${a.id}, 'k', 'x/a', false, ${T0 + i}, ${i})`
      await sql`UPDATE accounts SET admit_seq = 3, admit_at = ${T0 + 3} WHERE id = ${a.id}`
      // 5 and every later version.
      const rest = Array.from({ length: PG_LATEST_VERSION - 4 }, (_, i) => i + 5)
      expect(await migratePostgresUrl(url, T0)).toEqual(rest)
      const ids = await sql`SELECT id, gateway_id FROM requests ORDER BY id`
      expect(ids.map((r: any) => r.gateway_id)).toEqual(ids.map((r: any) => `legacy_${r.id}`))

      const store = await openStores(parseConfig(testConfigDoc({ database: { url } }), 'test'), {
        callerTime: true,
      })
      try {
        await store.complete([outcome(ids[1].gateway_id, 42)])
        const admitted = await store.admit(admission(Number(a.id), 'k'))
        if (!admitted.admitted) throw new Error('not admitted')
        await store.complete([outcome(admitted.gatewayId, 7)])
        // v6's counters: the old rows were counted by the migration, the new one by its admission.
        const day = T0 - (T0 % 86_400_000)
        const u = await store.usageSummary(Number(a.id), T0 + 60_000, day)
        expect(u.today).toMatchObject({ requests: 4, prompt_tokens: 2, completion_tokens: 49 })
        expect(u.last_24h).toEqual(u.today)
        expect(Object.keys(u.by_model)).toEqual(['x/a'])
      } finally {
        await store.close()
      }
      const rows = await sql`SELECT request_id, completion_tokens FROM requests ORDER BY id`
      expect(rows.map((r: any) => r.completion_tokens)).toEqual([null, 42, null, 7])
      expect(rows.map((r: any) => r.request_id)).toEqual(['dup', 'dup', 'dup', 'dup'])
      await sql.close()
    } finally {
      await pg.release()
    }
  }, 60_000)
})
