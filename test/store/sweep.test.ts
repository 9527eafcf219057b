/**
 * The SQLite sweeper without an index (migrations-v13.ts): each sweep reads the charges made
 * since the last one's bound, so a reservation nobody settled is settled by the first sweep whose
 * bound passes it — whichever account it is on, however many sweeps ran before — and admission
 * and settlement write no index page. It is settled to itself, the most it could have cost (its
 * process was killed: the upstream may have answered it in full), so its charge stays in the
 * windows until it slides out, as any settled charge does.
 */

import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import type { LimitRow } from '../../src/limits/rows.ts'
import type { ChargeRequest } from '../../src/limits/types.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { migrate } from '../../src/store/sqlite/migrations.ts'
import { chargedAdmission } from '../support/admissions.ts'
import { tempDir } from '../support/config-doc.ts'

const T0 = Date.parse('2026-03-11T10:00:00Z')
const TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'account', capacity: 100_000 }
const CHARGE: ChargeRequest = { rows: [TPM], inputTokens: 100, wantOutput: 300, price: null }

async function setup() {
  const store = openSqliteStore({ path: join(tempDir(), 'db.sqlite'), now: T0 })
  const accounts = [
    await store.createAccount({ name: 'a', plan: 'free', planStartedAt: T0, planExpiresAt: null, now: T0 }),
    await store.createAccount({ name: 'b', plan: 'free', planStartedAt: T0, planExpiresAt: null, now: T0 }),
  ]
  const input = (account: number, now: number) => chargedAdmission(accounts[account]!.id, now, CHARGE)
  const used = async (account: number, now: number) =>
    (await store.rowStates({ accountId: accounts[account]!.id, keyId: 'key_1', now, rows: [TPM] }))[0]!.used
  const unsettled = () =>
    store.db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM admissions WHERE settled = 0').get()!.n
  return { store, input, used, unsettled, ids: accounts.map((a) => a.id) }
}

test('each sweep settles what was made before its bound and not settled, to itself, on every account, once', async () => {
  const { store, input, used, unsettled, ids } = await setup()
  await store.admit(input(0, T0))
  await store.admit(input(1, T0 + 1))
  expect(await store.sweepReservations(T0 + 1)).toBe(1)
  // Settled at what it reserved (400): the window keeps it, as it would a charge settled by its request.
  expect([await used(0, T0 + 2), await used(1, T0 + 2)]).toEqual([400, 400])
  expect(unsettled()).toBe(1)
  // Made after the last bound, on both accounts; one of them settled before the sweep comes.
  await store.admit(input(0, T0 + 5))
  const settled = await store.admit(input(1, T0 + 6))
  if (!settled.admitted) throw new Error('refused')
  await store.complete([
    {
      gatewayId: settled.gatewayId,
      requestId: 'r',
      surface: 'chat',
      stream: false,
      status: 200,
      promptTokens: 100,
      completionTokens: 20,
      latencyMs: 1,
      ttftMs: null,
      errorCode: null,
      counted: { accountId: ids[1]!, keyId: 'key_1', model: 'demo/echo', at: settled.loggedAt! },
      settlement: { handle: settled.reservation!.handle, accountId: ids[1]!, tokens: 120, micros: 0 },
    },
  ])
  // Account b's first, made at the last bound, and account a's second; b's second is settled.
  expect(await store.sweepReservations(T0 + 3)).toBe(1)
  expect(await store.sweepReservations(T0 + 4)).toBe(0)
  expect(await store.sweepReservations(T0 + 10)).toBe(1)
  // a: two swept at 400 each; b: one swept at 400, one settled by its request at 120.
  expect([await used(0, T0 + 11), await used(1, T0 + 11)]).toEqual([800, 520])
  expect(unsettled()).toBe(0)
  expect(await store.sweepReservations(T0 + 20)).toBe(0)
  store.close()
})

test('migration 13: the unsettled index is gone and the first sweep still finds what was left unsettled before it', async () => {
  const path = join(tempDir(), 'db.sqlite')
  // The database as v12 left it: a charge settled (by a sweep), then one left unsettled.
  const db = new Database(path, { create: true, strict: true })
  migrate(db, T0 - 100_000, 12)
  db.run("INSERT INTO accounts (id, name, plan, plan_started_at, created_at) VALUES (1, 'a', 'free', 0, 0)")
  const admission = db.query('INSERT INTO admissions (account_id, created_at, seq) VALUES (1, ?, ?)')
  const charge = db.query(
    `INSERT INTO charges (account_id, created_at, seq, key_id, tokens, charge_micros, budgets, settled)
     VALUES (1, ?, ?, 'key_1', ?, 0, 0, ?)`,
  )
  admission.run(T0 - 100_000, 1)
  charge.run(T0 - 100_000, 1, 0, 1)
  admission.run(T0 - 50_000, 2)
  charge.run(T0 - 50_000, 2, 400, 0)
  db.close()

  const store = openSqliteStore({ path, now: T0 })
  // Read through the key's own window: these charges were written without the account's scope
  // row, so the account keeps no limit state and its own windows read 0 without summing
  // (charges.ts); the key's window sums its charges.
  const KEY_TPM: LimitRow = { ...TPM, scope: 'key' }
  const used = async (now: number) =>
    (await store.rowStates({ accountId: 1, keyId: 'key_1', now, rows: [KEY_TPM] }))[0]!.used
  const indexes = store.db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE name = 'charges_unsettled'")
    .all()
  expect(indexes).toEqual([])
  expect(await used(T0 - 49_000)).toBe(400)
  expect(await store.sweepReservations(T0 - 20_000)).toBe(1)
  // Settled to itself: still counted, never swept again.
  expect(await used(T0 - 19_000)).toBe(400)
  expect(
    store.db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM admissions WHERE settled = 0').get()!.n,
  ).toBe(0)
  expect(await store.sweepReservations(T0 - 10_000)).toBe(0)
  store.close()
})
