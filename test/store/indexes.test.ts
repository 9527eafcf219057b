/**
 * The request log's indexes, audited for the hot path (issue 12): what each table keeps and why.
 * SQLite: admission touches only `admissions` and `usage_minutes` (primary keys, no secondary
 * index); the log row, with its five filter indexes, is written once by the outcome batch.
 * PostgreSQL: the indexes the console's log indexes made redundant are gone (v8).
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SQL } from 'bun'
import { openSqliteStore } from '../../src/store/index.ts'
import { tempDir } from '../support/config-doc.ts'
import { skipWithout } from '../support/engines.ts'
import { sharedPostgres } from '../support/shared-engines.ts'

/** One per request-log filter driver (src/store/sqlite/request-log.ts). */
const LOG_INDEXES = [
  'requests_account_time',
  'requests_key_time',
  'requests_model_time',
  'requests_status_time',
  'requests_time',
]

test('SQLite: requests keeps only the log filters’ indexes; admission tables have none besides their keys', () => {
  const store = openSqliteStore({ path: join(tempDir(), 'db.sqlite') })
  const indexes = (table: string) =>
    store.db
      .query<{ name: string }, [string]>(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name",
      )
      .all(table)
      .map((r) => r.name)
  expect(indexes('requests')).toEqual(LOG_INDEXES)
  expect(indexes('admissions')).toEqual([])
  expect(indexes('usage_minutes')).toEqual([])
  // The limiter's reads are seeks on the admissions primary key.
  const plan = store.db
    .query<{ detail: string }, [number, number]>(
      'EXPLAIN QUERY PLAN SELECT seq, created_at FROM admissions WHERE account_id = ? AND created_at > ? ORDER BY created_at, seq LIMIT 1',
    )
    .all(1, 0)
    .map((r) => r.detail)
    .join(' ')
  expect(plan).toContain('USING PRIMARY KEY (account_id=? AND created_at>?)')
  store.close()
})

describe.skipIf(skipWithout(['postgres'], 'store-indexes.test.ts on PostgreSQL'))('PostgreSQL', () => {
  test('requests has no index that is a prefix of another', async () => {
    const pg = await sharedPostgres()
    try {
      const url = await pg.clone()
      const sql = new SQL(url, { max: 1 })
      const rows = await sql`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'requests'`
      const columns = new Map<string, string>(
        rows.map((r: { indexname: string; indexdef: string }) => [
          r.indexname,
          /\((.*)\)/.exec(r.indexdef)![1]!,
        ]),
      )
      expect(columns.has('requests_key_time')).toBe(false)
      expect(columns.has('requests_time')).toBe(false)
      const unique = new Set(
        rows
          .filter((r: { indexdef: string }) => r.indexdef.startsWith('CREATE UNIQUE'))
          .map((r: { indexname: string }) => r.indexname),
      )
      for (const [name, cols] of columns) {
        if (unique.has(name)) continue // a constraint, not only a read path
        for (const [other, more] of columns) {
          if (other !== name) expect(more.startsWith(`${cols},`)).toBe(false)
        }
      }
      await sql.close()
    } finally {
      await pg.release()
    }
  }, 60_000)
})
