/**
 * Reserve and settle on SQLite (src/store/sqlite/reserve.ts): token and money rows are checked
 * and charged in the admission's own transaction, the output allowance is clamped to what is
 * left, settlement (once) moves every window that still holds the charge, and the sweeper
 * settles a reservation nobody settled.
 */

import { expect, test } from 'bun:test'
import { join } from 'node:path'
import type { LimitRow } from '../../src/limits/rows.ts'
import type { ChargeRequest } from '../../src/limits/types.ts'
import { openSqliteStore, type Store } from '../../src/store/index.ts'
import type { AdmitResult } from '../../src/store/types.ts'
import { newRequestId } from '../../src/util/ids.ts'
import { chargedAdmission, storeWithAccount } from '../support/admissions.ts'
import { tempDir } from '../support/config-doc.ts'

const T0 = Date.parse('2026-03-11T10:00:00Z')
const TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'account', capacity: 3_000 }
const BUDGET: LimitRow = {
  resource: 'microdollars',
  window: 'period',
  period: 'month',
  scope: 'account',
  capacity: 10_000,
}

async function setup() {
  const { store, accountId } = await storeWithAccount(T0)
  const input = (now: number, charge: ChargeRequest, keyId = 'key_1') =>
    chargedAdmission(accountId, now, charge, keyId)
  const used = async (rows: LimitRow[], now: number, keyId = 'key_1') =>
    (await store.rowStates({ accountId, keyId, now, rows })).map((s) => s.used)
  return { store, input, used, accountId }
}

const reserved = (r: AdmitResult) => (r.admitted ? (r.reservation?.tokens ?? 0) : 0)

test('40 admissions at once against TPM 3,000: what they reserve never exceeds it, and fills it to within one reservation', async () => {
  const { store, input, used } = await setup()
  const charge: ChargeRequest = { rows: [TPM], inputTokens: 100, wantOutput: 300, price: null }
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => store.admit(input(T0 + i, charge))))
  const total = results.reduce((n, r) => n + reserved(r), 0)
  expect(total).toBeLessThanOrEqual(3_000)
  expect(total).toBeGreaterThan(3_000 - 400)
  expect(results.filter((r) => r.admitted).length).toBe(7)
  expect(await used([TPM], T0 + 100)).toEqual([total])
  const refused = results.find((r) => !r.admitted)!
  if (refused.admitted) throw new Error('admitted')
  expect(refused.charge!.state.row).toEqual(TPM)
  // Enough leaves when the first reservation does.
  expect(refused.retryAt).toBe(T0 + 60_000)
  store.close()
})

test("one commit keeps the account's state on its newest row only: when the batch's last admission of it fails, the row before holds it", async () => {
  const { store, input, used, accountId } = await setup()
  const charge: ChargeRequest = { rows: [TPM], inputTokens: 100, wantOutput: 300, price: null }
  // Two accounts interleaved in one commit; account A's last admission fails after writing its row
  // (a NOT NULL violation in the same savepoint), so its state goes back onto the one before.
  const other = await store.createAccount({
    name: 'b',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  const broken = { ...input(T0 + 2, charge), model: null as unknown as string }
  const settled = await Promise.allSettled([
    store.admit(input(T0, charge)),
    store.admit({ ...input(T0, charge), accountId: other.id }),
    store.admit(input(T0 + 1, charge)),
    store.admit({ ...input(T0 + 1, charge), accountId: other.id }),
    store.admit(broken),
  ])
  expect(settled.map((s) => s.status)).toEqual([
    'fulfilled',
    'fulfilled',
    'fulfilled',
    'fulfilled',
    'rejected',
  ])
  expect(await used([TPM], T0 + 3)).toEqual([800])
  const otherUsed = await store.rowStates({ accountId: other.id, keyId: 'key_1', now: T0 + 3, rows: [TPM] })
  expect(otherUsed.map((s) => s.used)).toEqual([800])
  // The next admissions build on it, alone and in a commit whose later admissions are refused.
  expect((await store.admit(input(T0 + 4, charge))).admitted).toBe(true)
  expect(await used([TPM], T0 + 5)).toEqual([1_200])
  const burst = await Promise.all(Array.from({ length: 6 }, (_, i) => store.admit(input(T0 + 6 + i, charge))))
  expect(burst.map((r) => r.admitted)).toEqual([true, true, true, true, false, false])
  expect(await used([TPM], T0 + 20)).toEqual([2_800])
  expect(accountId).not.toBe(other.id)
  store.close()
})
test('charges leaving a window are taken from the settled ones read before, across commits and processes, and the window stays exact', async () => {
  // Two processes on one file: each keeps what it read of the account's next departures.
  const path = join(tempDir(), 'db.sqlite')
  const a = openSqliteStore({ path, now: T0 })
  const { id: accountId } = await a.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  const b = openSqliteStore({ path, now: T0 })
  const wide: LimitRow = { ...TPM, capacity: 1_000_000_000 }
  // Sizes that differ, so a charge subtracted twice, not at all or at a stale size shows in the sum.
  const charge = (i: number): ChargeRequest => ({
    rows: [wide],
    inputTokens: 100 + i,
    wantOutput: 10,
    price: null,
  })
  /** Every charge made, with what it holds now (its reservation, then what it settled to). */
  const charged: { at: number; tokens: number; store: Store; r: AdmitResult }[] = []
  const check = (store: Store, rs: AdmitResult[]) => {
    for (const r of rs) {
      if (!r.admitted) continue
      charged.push({ at: r.loggedAt!, tokens: r.reservation!.tokens, store, r })
      const inWindow = charged.filter((c) => c.at > r.loggedAt! - 60_000 && c.at <= r.loggedAt!)
      expect(r.reservation!.states[0]!.used).toBe(inWindow.reduce((n, c) => n + c.tokens, 0))
    }
  }
  const settle = async (c: (typeof charged)[number], tokens: number) => {
    c.tokens = tokens
    const r = c.r as Extract<AdmitResult, { admitted: true }>
    await c.store.complete([
      {
        gatewayId: r.gatewayId,
        requestId: 'r',
        surface: 'chat',
        stream: false,
        status: 200,
        promptTokens: tokens,
        completionTokens: 0,
        latencyMs: 1,
        ttftMs: null,
        errorCode: null,
        counted: { accountId, keyId: 'key_1', model: 'demo/echo', at: r.loggedAt! },
        settlement: { handle: r.reservation!.handle, accountId, tokens, micros: 0 },
      },
    ])
  }
  const admit = async (store: Store, t: number, c = charge(t % 97)) => {
    const r = await store.admit(chargedAdmission(accountId, t, c))
    check(store, [r])
    return r
  }
  // A first minute: 60 charges a second apart, each alone, from either process, each settled but
  // one (a long stream, settled only once it is among the charges read ahead).
  for (let i = 0; i < 60; i++) {
    await admit(i % 3 ? a : b, T0 + i * 1_000)
    if (i !== 20) await settle(charged.at(-1)!, 7 + i)
  }
  const at = (s: number) => T0 + 60_000 + s
  // A minute on: one or more leave each admission, each its own commit, from either process.
  for (let s = 0; s < 20_000; s += 700) await admit(s % 2_100 ? a : b, at(s))
  await settle(charged[20]!, 3)
  for (let s = 20_000; s < 30_000; s += 1_300) await admit(a, at(s))
  // A refused admission that reads what leaves after a gap moves the window without keeping it;
  // the next starts from the stored one, before what the refused one read.
  const tight: LimitRow = { ...BUDGET, capacity: 1 }
  const refused = await a.admit(
    chargedAdmission(accountId, at(50_000), {
      ...charge(1),
      rows: [wide, tight],
      price: { input: 1e6, output: 1e6 },
    }),
  )
  expect(refused.admitted).toBe(false)
  await admit(a, at(50_001))
  // Bursts in one commit: more than 16 leave within it.
  const burst = (store: Store, times: number[]) =>
    Promise.all(times.map((t) => store.admit(chargedAdmission(accountId, at(t), charge(t % 89)))))
  check(
    a,
    await burst(
      a,
      Array.from({ length: 20 }, (_, j) => 51_000 + j * 200),
    ),
  )
  for (const c of charged.slice(-20)) await settle(c, c.tokens - 50)
  check(
    b,
    await burst(
      b,
      Array.from({ length: 6 }, (_, j) => 56_000 + j * 100),
    ),
  )
  for (const c of charged.slice(-6)) await settle(c, c.tokens - 60)
  // A quiet stretch: the window holds a few charges only, newer ones come from either process.
  const quiet: [Store, number][] = [
    [a, 115_000],
    [b, 116_000],
    [a, 117_000],
    [b, 118_000],
    [a, 176_000],
    [b, 177_000],
    [a, 178_000],
  ]
  for (const [store, s] of quiet) {
    await admit(store, at(s))
    await settle(charged.at(-1)!, s / 1_000)
  }
  a.close()
  b.close()
})

test('the output allowance is clamped to what the window leaves, never refused merely for the model maximum', async () => {
  const { store, input } = await setup()
  const small: LimitRow = { ...TPM, capacity: 1_000 }
  const r = await store.admit(input(T0, { rows: [small], inputTokens: 120, wantOutput: 4_096, price: null }))
  if (!r.admitted) throw new Error('refused')
  expect(r.reservation!.outputTokens).toBe(880)
  expect(r.reservation!.clampedBy).toBe('account:tokens:minute')
  expect(r.reservation!.tokens).toBe(1_000)
  // Nothing useful fits now: refused, naming the row.
  const again = await store.admit(
    input(T0 + 1, { rows: [small], inputTokens: 120, wantOutput: 4_096, price: null }),
  )
  expect(again.admitted).toBe(false)
  store.close()
})

test('settlement moves the windows to what was used, once; a later window no longer holds it', async () => {
  const { store, input, used, accountId } = await setup()
  const TPD: LimitRow = { ...TPM, window: 'day', capacity: 100_000 }
  const r = await store.admit(input(T0, { rows: [TPM, TPD], inputTokens: 200, wantOutput: 800, price: null }))
  if (!r.admitted) throw new Error('refused')
  expect(await used([TPM, TPD], T0 + 1)).toEqual([1_000, 1_000])
  const settle = { handle: r.reservation!.handle, accountId, tokens: 150, micros: 0 }
  const outcome = {
    gatewayId: r.gatewayId,
    requestId: 'r',
    surface: 'chat',
    stream: false,
    status: 200,
    promptTokens: 100,
    completionTokens: 50,
    latencyMs: 1,
    ttftMs: null,
    errorCode: null,
    counted: { accountId, keyId: 'key_1', model: 'demo/echo', at: r.loggedAt! },
  }
  await store.complete([{ ...outcome, settlement: settle }])
  expect(await used([TPM, TPD], T0 + 2)).toEqual([150, 150])
  // A second settlement of the same charge changes nothing.
  await store.complete([{ ...outcome, gatewayId: newRequestId(), settlement: { ...settle, tokens: 9 } }])
  expect(await used([TPM, TPD], T0 + 3)).toEqual([150, 150])
  // The running sums agree: the next admission sees 150 used in both windows.
  const next = await store.admit(
    input(T0 + 4, { rows: [TPM, TPD], inputTokens: 10, wantOutput: 10, price: null }),
  )
  if (!next.admitted) throw new Error('refused')
  expect(next.reservation!.states.map((s) => s.used)).toEqual([170, 170])
  // A minute later the minute window holds only the newer charges; the day still holds all three.
  const later = await store.admit(
    input(T0 + 60_001, { rows: [TPM, TPD], inputTokens: 10, wantOutput: 10, price: null }),
  )
  if (!later.admitted) throw new Error('refused')
  expect(later.reservation!.states.map((s) => s.used)).toEqual([40, 190])
  store.close()
})

test('a $0.01 budget at $0.0025 a request admits exactly four; settling below the reservation frees money', async () => {
  const { store, input, used, accountId } = await setup()
  // 100 input tokens at $5/1M = $0.0005, 200 output at $10/1M = $0.002: $0.0025 at most.
  const charge: ChargeRequest = {
    rows: [BUDGET],
    inputTokens: 100,
    wantOutput: 200,
    price: { input: 5_000_000, output: 10_000_000 },
  }
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => store.admit(input(T0 + i, charge))))
  expect(results.filter((r) => r.admitted).length).toBe(4)
  const refused = results.find((r) => !r.admitted)!
  if (refused.admitted) throw new Error('admitted')
  expect(refused.charge!.retryAt).toBe(Date.parse('2026-04-01T00:00:00Z'))
  expect(await used([BUDGET], T0 + 20)).toEqual([10_000])
  const first = results[0]!
  if (!first.admitted) throw new Error('refused')
  await store.complete([
    {
      gatewayId: first.gatewayId,
      requestId: 'r',
      surface: 'chat',
      stream: false,
      status: 200,
      promptTokens: 100,
      completionTokens: 50,
      latencyMs: 1,
      ttftMs: null,
      errorCode: null,
      costMicros: 1_000,
      counted: { accountId, keyId: 'key_1', model: 'demo/echo', at: first.loggedAt! },
      settlement: { handle: first.reservation!.handle, accountId, tokens: 150, micros: 1_000 },
    },
  ])
  expect(await used([BUDGET], T0 + 21)).toEqual([8_500])
  store.close()
})

test("a key's own rows bind within the account's; the sweeper settles to itself what nobody settled", async () => {
  const { store, input, used } = await setup()
  const keyTpm: LimitRow = { ...TPM, scope: 'key', capacity: 400 }
  const charge: ChargeRequest = { rows: [TPM, keyTpm], inputTokens: 100, wantOutput: 150, price: null }
  const a = await store.admit(input(T0, charge))
  const b = await store.admit(input(T0 + 1, charge))
  expect([a.admitted, b.admitted]).toEqual([true, false])
  if (b.admitted) throw new Error('admitted')
  expect(b.charge!.state.row.scope).toBe('key')
  // Another key of the account still has the account's room.
  expect((await store.admit(input(T0 + 2, charge, 'key_2'))).admitted).toBe(true)
  expect(await used([TPM], T0 + 3)).toEqual([500])
  // Settled at what each reserved: the account's and the key's windows keep them, and each is
  // swept once.
  expect(await store.sweepReservations(T0 + 1)).toBe(1)
  expect(await used([TPM, keyTpm], T0 + 4)).toEqual([500, 250])
  expect(await store.sweepReservations(T0 + 10)).toBe(1)
  expect(await store.sweepReservations(T0 + 20)).toBe(0)
  expect(await used([TPM], T0 + 5)).toEqual([500])
  store.close()
})
