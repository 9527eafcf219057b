/**
 * The account's token windows as `/v1/usage` reads them on SQLite (src/store/sqlite/charges.ts):
 * summed from the charges when the account keeps limit state, not read at all when it keeps none
 * (a busy unmetered account's day is millions of uncharged admissions: GET /v1/usage stayed at
 * ~1.5 ms for 2,000,000 of them in `bun run bench`, ~100 ms when it summed them).
 */
import { expect, test } from 'bun:test'
import type { LimitRow } from '../../src/limits/rows.ts'
import { admission, chargedAdmission, storeWithAccount } from '../support/admissions.ts'

const T0 = Date.parse('2026-03-11T10:00:00Z')
const UNBOUNDED = Number.MAX_SAFE_INTEGER
const ACCOUNT_MINUTE: LimitRow = {
  resource: 'tokens',
  window: 'minute',
  scope: 'account',
  capacity: UNBOUNDED,
}
const ACCOUNT_DAY: LimitRow = { ...ACCOUNT_MINUTE, window: 'day' }

async function setup() {
  const { store, accountId } = await storeWithAccount(T0)
  const used = async (rows: LimitRow[], now: number, keyId = 'key_1') =>
    (await store.rowStates({ accountId, keyId, now, rows })).map((s) => s.used)
  return { store, accountId, used }
}

test('an account charged on rows of its own: its windows hold what it reserved', async () => {
  const { store, accountId, used } = await setup()
  const TPM: LimitRow = { ...ACCOUNT_MINUTE, capacity: 10_000 }
  for (let i = 0; i < 3; i++)
    await store.admit(
      chargedAdmission(accountId, T0 + i, { rows: [TPM], inputTokens: 100, wantOutput: 50, price: null }),
    )
  for (let i = 0; i < 5; i++) await store.admit(admission(accountId, T0 + 10 + i))
  expect(await used([ACCOUNT_MINUTE, ACCOUNT_DAY], T0 + 100)).toEqual([450, 450])
  expect(await used([ACCOUNT_MINUTE, ACCOUNT_DAY], T0 + 61_000)).toEqual([0, 450])
  store.close()
})

test('an account no row of its own ever charged: 0 on its windows without summing its admissions; a key with rows of its own still shows its charges', async () => {
  const { store, accountId, used } = await setup()
  for (let i = 0; i < 50; i++) await store.admit(admission(accountId, T0 + i))
  expect(await used([ACCOUNT_MINUTE, ACCOUNT_DAY], T0 + 100)).toEqual([0, 0])
  // A key's own TPM charges the key, not the account's windows: the account keeps no state.
  const KEY_TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'key', capacity: 5_000 }
  await store.admit(
    chargedAdmission(accountId, T0 + 200, { rows: [KEY_TPM], inputTokens: 100, wantOutput: 50, price: null }),
  )
  expect(await used([ACCOUNT_MINUTE, ACCOUNT_DAY, KEY_TPM], T0 + 300)).toEqual([0, 0, 150])
  store.close()
})
