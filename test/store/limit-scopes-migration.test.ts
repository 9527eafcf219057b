/**
 * Migration 12 moves the running window sums (`limit_sums`) and the money counters (`spend`) into
 * one row per scope (`limit_scopes`), and migration 14 the charges and an account's row into its
 * admissions: after the upgrades, admission sees exactly what it saw before — the windows' use,
 * the current period's spend — and a reservation made before them still settles (swept) out of
 * the sums it was charged to.
 */

import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import type { LimitRow } from '../../src/limits/rows.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { migrate } from '../../src/store/sqlite/migrations.ts'
import { chargedAdmission } from '../support/admissions.ts'
import { tempDir } from '../support/config-doc.ts'

const T0 = Date.parse('2026-03-11T10:00:00Z')
const MONTH = Date.parse('2026-03-01T00:00:00Z')
const TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'account', capacity: 100_000 }
const TPD: LimitRow = { ...TPM, window: 'day', capacity: 1_000_000 }
const BUDGET: LimitRow = {
  resource: 'microdollars',
  window: 'period',
  period: 'month',
  scope: 'account',
  capacity: 1_000_000,
}

test('sums and spend carried over by migrations 12 and 14 are what admission and /v1/usage see', async () => {
  const path = join(tempDir(), 'db.sqlite')
  // The database as v11 left it: v9's tables, written as its admission and settlement did.
  const db = new Database(path, { create: true, strict: true })
  migrate(db, T0 - 3_600_000, 11)
  db.run(
    "INSERT INTO accounts (id, name, plan, plan_started_at, created_at) VALUES (1, 'acme', 'free', 0, 0)",
  )
  const a = { id: 1 }
  const charge = db.query(
    `INSERT INTO charges (account_id, created_at, seq, key_id, tokens, charge_micros, budgets, settled)
     VALUES (?, ?, ?, 'key_1', ?, ?, 3, ?)`,
  )
  charge.run(a.id, T0 - 7_200_000, 1, 1_000, 400, 1)
  charge.run(a.id, T0 - 30_000, 2, 500, 300, 1)
  charge.run(a.id, T0 - 10_000, 3, 300, 200, 0)
  // Their admissions (the oldest one's already trimmed by retention: migration 14 writes it one).
  const admission = db.query('INSERT INTO admissions (account_id, created_at, seq) VALUES (?, ?, ?)')
  admission.run(a.id, T0 - 30_000, 2)
  admission.run(a.id, T0 - 10_000, 3)
  const sum = db.query('INSERT INTO limit_sums (scope, win, start, used) VALUES (?, ?, ?, ?)')
  sum.run(`a:${a.id}`, 'tokens:minute', T0 - 10_000 - 60_000, 800)
  sum.run(`a:${a.id}`, 'tokens:day', T0 - 10_000 - 86_400_000, 1_800)
  const spend = db.query('INSERT INTO spend (scope, period, start, micros) VALUES (?, ?, ?, ?)')
  spend.run(`a:${a.id}`, 'month', MONTH, 900)
  // Last month's counter: over, never read again.
  spend.run(`a:${a.id}`, 'month', Date.parse('2026-02-01T00:00:00Z'), 99_999)
  db.close()

  const store = openSqliteStore({ path, now: T0 })
  const tables = store.db
    .query<{ name: string }, []>(
      "SELECT name FROM sqlite_master WHERE name IN ('limit_sums', 'spend', 'charges') ORDER BY name",
    )
    .all()
  expect(tables).toEqual([])
  const rows = [TPM, TPD, BUDGET]
  const usage = async (now: number) =>
    (await store.rowStates({ accountId: a.id, keyId: 'key_1', now, rows })).map((s) => s.used)
  expect(await usage(T0)).toEqual([800, 1_800, 900])
  const request = { rows, inputTokens: 10, wantOutput: 10, price: { input: 1_000_000, output: 1_000_000 } }
  const admit = (now: number) => store.admit(chargedAdmission(a.id, now, request))
  const r = await admit(T0)
  if (!r.admitted) throw new Error('refused')
  expect(r.reservation!.states.map((s) => s.used)).toEqual([820, 1_820, 920])
  // The minute window's oldest charge, looked up afresh after the upgrade.
  expect(r.reservation!.states[0]!.resetAt).toBe(T0 - 30_000 + 60_000)
  expect(await usage(T0 + 1)).toEqual([820, 1_820, 920])
  // The reservation made before the upgrade, never settled: swept, settled to itself, so it stays
  // in the sums and the spend (the sweep's rule, reserve.ts).
  expect(await store.sweepReservations(T0 - 5_000)).toBe(1)
  const next = await admit(T0 + 2)
  if (!next.admitted) throw new Error('refused')
  expect(next.reservation!.states.map((s) => s.used)).toEqual([840, 1_840, 940])
  store.close()
})
