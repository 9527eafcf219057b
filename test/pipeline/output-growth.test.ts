/**
 * Growth of an uncapped request's output hold (pipeline/output-growth.ts) through the running
 * check (OutputAllowance) against a real SQLite limiter: a chunk goes only when the count with it
 * is held, the hold grows by a slice for the chunk that would pass it, takes what the rows leave when a slice
 * does not fit, and ends the answer when nothing is left — never holding past the limit.
 */

import { beforeAll, expect, test } from 'bun:test'
import { outputTokenCount } from '../../src/limits/output-count.ts'
import type { LimitRow } from '../../src/limits/rows.ts'
import type { ChargeRequest } from '../../src/limits/types.ts'
import { OutputAllowance } from '../../src/pipeline/output-allowance.ts'
import {
  canGrow,
  firstOutput,
  growingAllowance,
  OUTPUT_SLICE,
  uncappedCap,
  unseenCeiling,
} from '../../src/pipeline/output-growth.ts'
import { chargedAdmission, storeWithAccount } from '../support/admissions.ts'

const T0 = Date.parse('2026-03-11T10:00:00Z')
const TPM: LimitRow = { resource: 'tokens', window: 'minute', scope: 'account', capacity: 10_000 }

/** Ten tokens on o200k, from the first count (before, until its tables had loaded, a token a byte: 60). */
const TEN = ' hello'.repeat(10)
beforeAll(() => {
  expect(outputTokenCount(TEN, 'o200k')).toBe(10)
})

async function admitted(charge: ChargeRequest) {
  const { store, accountId } = await storeWithAccount(T0)
  const r = await store.admit(chargedAdmission(accountId, T0, charge))
  if (!r.admitted) throw new Error('refused')
  return { store, accountId, reservation: r.reservation! }
}

test('an uncapped request holds one slice; the upstream is sent what the rows could cover, at most the model maximum', async () => {
  expect(firstOutput(null, 32_000, true)).toBe(OUTPUT_SLICE)
  expect(firstOutput(null, 1_000, true)).toBe(1_000)
  expect(firstOutput(20_000, 32_000, true)).toBe(20_000)
  // A model that does not stream answers whole: no hold can grow, the whole maximum is held.
  expect(firstOutput(null, 32_000, false)).toBe(32_000)
  expect(firstOutput(20_000, 32_000, false)).toBe(20_000)
  const charge: ChargeRequest = { rows: [TPM], inputTokens: 100, wantOutput: OUTPUT_SLICE, price: null }
  const { store, reservation } = await admitted(charge)
  expect(reservation.outputTokens).toBe(OUTPUT_SLICE)
  expect(uncappedCap(reservation, charge, 32_000)).toEqual({ cap: 9_900, by: 'account:tokens:minute' })
  expect(uncappedCap(reservation, charge, 5_000)).toEqual({ cap: 5_000, by: null })
  store.close()
})

test('the allowance grows by slices as the answer passes what is held, then by what is left, then ends it', async () => {
  const charge: ChargeRequest = { rows: [TPM], inputTokens: 100, wantOutput: OUTPUT_SLICE, price: null }
  const { store, accountId, reservation } = await admitted(charge)
  const grow = growingAllowance(reservation, {
    limiter: store,
    accountId,
    keyId: 'key_1',
    charge,
    cap: 9_900,
    now: () => T0 + 1,
  })
  const allowance = new OutputAllowance(reservation.outputTokens, 'o200k', grow)
  // Chunks of 10 tokens counted: the answer runs on while growth covers it.
  let relayed = 0
  for (; relayed < 20_000; relayed += 10) {
    // Counted, then asked, as the stream path asks (output-cut.ts).
    allowance.begin()
    allowance.add(TEN)
    const ok = allowance.allows()
    if (!(ok === true || (await ok))) break
  }
  // It grew to the whole 9,900 the row left (one slice, then the rest): the upstream's cap,
  // so nothing is kept back for a chunk past it.
  expect(reservation.outputTokens).toBe(9_900)
  expect(reservation.tokens).toBe(10_000)
  expect(relayed).toBe(9_900)
  expect(allowance.cut).toBe(true)
  const [state] = await store.rowStates({ accountId, keyId: 'key_1', now: T0 + 2, rows: [TPM] })
  expect(state!.used).toBe(10_000)
  store.close()
})

test('another request taking the room first: growth gets what is left and the answer ends at the last chunk its hold covers', async () => {
  const charge: ChargeRequest = { rows: [TPM], inputTokens: 100, wantOutput: OUTPUT_SLICE, price: null }
  const { store, accountId, reservation } = await admitted(charge)
  // A second uncapped request holds its slice too: 10,000 − 2 × 4,196 = 1,608 left.
  expect((await store.admit(chargedAdmission(accountId, T0, charge))).admitted).toBe(true)
  const grow = growingAllowance(reservation, {
    limiter: store,
    accountId,
    keyId: 'key_1',
    charge,
    cap: 9_900,
    now: () => T0 + 1,
  })
  const allowance = new OutputAllowance(reservation.outputTokens, 'o200k', grow)
  let relayed = 0
  for (; relayed < 20_000; relayed += 10) {
    // Counted, then asked, as the stream path asks (output-cut.ts).
    allowance.begin()
    allowance.add(TEN)
    const ok = allowance.allows()
    if (!(ok === true || (await ok))) break
  }
  expect(reservation.outputTokens).toBe(OUTPUT_SLICE + 1_608)
  // Every chunk relayed is held; the one refused would have passed the hold.
  expect(relayed).toBeLessThanOrEqual(reservation.outputTokens)
  expect(relayed).toBeGreaterThan(reservation.outputTokens - 10)
  expect(allowance.generated).toBe(relayed)
  const [state] = await store.rowStates({ accountId, keyId: 'key_1', now: T0 + 2, rows: [TPM] })
  expect(state!.used).toBe(10_000)
  store.close()
})

test('on a budget alone the hold grows in money at the dearest output price, to what the budget leaves', async () => {
  // $0.01 a month; input free, output 2 micro-dollars a token: 5,000 output tokens in all.
  const BUDGET: LimitRow = {
    resource: 'microdollars',
    window: 'period',
    period: 'month',
    scope: 'account',
    capacity: 10_000,
  }
  const charge: ChargeRequest = {
    rows: [BUDGET],
    inputTokens: 100,
    wantOutput: OUTPUT_SLICE,
    price: { input: 0, output: 2_000_000 },
  }
  const { store, accountId, reservation } = await admitted(charge)
  expect(reservation.micros).toBe(2 * OUTPUT_SLICE)
  const { cap } = uncappedCap(reservation, charge, 32_000)
  expect(cap).toBe(5_000)
  const grow = growingAllowance(reservation, {
    limiter: store,
    accountId,
    keyId: 'key_1',
    charge,
    cap,
    now: () => T0 + 1,
  })
  const allowance = new OutputAllowance(reservation.outputTokens, 'claude', grow)
  let relayed = 0
  for (; relayed < 20_000; relayed += 10) {
    // Counted, then asked, as the stream path asks (output-cut.ts).
    allowance.begin()
    allowance.add('0123456789')
    const ok = allowance.allows()
    if (!(ok === true || (await ok))) break
  }
  // The answer ends at the last chunk the 5,000 the budget covers hold: the one after would pass
  // it (counted as Anthropic's calibrated bound counts it, whether or not o200k has loaded).
  const perChunk = outputTokenCount('0123456789', 'claude')
  expect(relayed).toBeGreaterThan(0)
  expect(allowance.counted).toBeLessThanOrEqual(5_000)
  expect(allowance.counted).toBeGreaterThan(5_000 - perChunk)
  expect([reservation.outputTokens, reservation.micros]).toEqual([5_000, 10_000])
  const [state] = await store.rowStates({ accountId, keyId: 'key_1', now: T0 + 2, rows: [BUDGET] })
  expect(state!.used).toBe(10_000)
  store.close()
})

test('a hold grows only where every model streams and none reasons: listed `reasoning` or configured `always_reasons` (review66b)', () => {
  expect(canGrow([{ features: ['streaming'] }])).toBe(true)
  expect(canGrow([{ features: ['streaming'] }, { features: [] }])).toBe(false)
  expect(canGrow([{ features: ['streaming', 'reasoning'] }])).toBe(false)
  expect(canGrow([{ features: ['streaming'] }, { features: ['streaming'], always_reasons: true }])).toBe(
    false,
  )
  expect(canGrow([{ features: ['streaming'], always_reasons: false }])).toBe(true)
})

test('an answer that cannot grow holds at most half the tightest limit, never under a slice (audit66e)', () => {
  const tpm = (capacity: number): LimitRow => ({
    resource: 'tokens',
    window: 'minute',
    scope: 'account',
    capacity,
  })
  const budget: LimitRow = {
    resource: 'microdollars',
    window: 'period',
    period: 'month',
    scope: 'account',
    capacity: 100_000,
  }
  expect(unseenCeiling([tpm(100_000)], null)).toBe(50_000)
  expect(unseenCeiling([tpm(100_000), tpm(30_000)], null)).toBe(15_000)
  expect(unseenCeiling([tpm(2_000)], null)).toBe(OUTPUT_SLICE)
  // $0.10 at $4 per 1M output tokens (prices in micro-dollars per 1M): 25,000 tokens, half 12,500.
  expect(unseenCeiling([budget], { output: 4_000_000 })).toBe(12_500)
  // A free model: the budget bounds no output.
  expect(unseenCeiling([budget], null)).toBe(Number.POSITIVE_INFINITY)
  expect(firstOutput(null, 128_000, false, 50_000)).toBe(50_000)
  expect(firstOutput(null, 32_000, false, 50_000)).toBe(32_000)
  expect(firstOutput(null, 128_000, true, 50_000)).toBe(OUTPUT_SLICE)
  expect(firstOutput(120_000, 128_000, false, 50_000)).toBe(120_000)
})
