/** Migration 3 fills the usage counters from an existing request log, so upgrading loses no history. */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { openSqliteStore } from '../../src/store/index.ts'
import { tempDir } from '../support/config-doc.ts'

test('counters built by the migration equal the log they were built from', () => {
  const path = join(tempDir(), 'db.sqlite')
  const T0 = Date.parse('2026-03-01T10:00:00Z')
  const first = openSqliteStore({ path, now: T0 })
  const db = first.db
  db.run("INSERT INTO accounts (id, name, plan, plan_started_at, created_at) VALUES (1, 'a', 'free', 0, 0)")
  const insert = db.query(
    `INSERT INTO requests (request_id, account_id, key_id, model, stream, created_at, seq, status, prompt_tokens, completion_tokens)
     VALUES (?, 1, 'k', ?, 0, ?, ?, ?, ?, ?)`,
  )
  for (let i = 1; i <= 500; i++)
    insert.run(
      `r${i}`,
      i % 2 ? 'x/a' : 'x/b',
      T0 + i * 7_919,
      i,
      i % 9 ? 200 : 502,
      i % 9 ? 10 : null,
      i % 9 ? i : null,
    )
  // Pretend this database predates the counters.
  db.run('DROP TABLE usage_minutes')
  db.run('DELETE FROM schema_migrations WHERE version = 3')
  first.close()

  const store = openSqliteStore({ path, now: T0 })
  const fromCounters = store.db
    .query(
      'SELECT SUM(requests) AS r, SUM(prompt_tokens) AS p, SUM(completion_tokens) AS c, SUM(errors) AS e FROM usage_minutes',
    )
    .get()
  const fromLog = store.db
    .query(
      'SELECT COUNT(*) AS r, SUM(prompt_tokens) AS p, SUM(completion_tokens) AS c, SUM(status >= 400) AS e FROM requests',
    )
    .get()
  expect(fromCounters).toEqual(fromLog)
  expect((fromLog as { e: number }).e).toBeGreaterThan(0)
  store.close()
})
