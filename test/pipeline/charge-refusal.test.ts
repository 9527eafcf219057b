import { describe, expect, test } from 'bun:test'
import { retriesSoon } from '../../src/limits/refusals.ts'
import { rowState } from '../../src/limits/rows.ts'
import type { ChargeRequest } from '../../src/limits/types.ts'
import { chargeRefusalError } from '../../src/pipeline/charge.ts'

const now = Date.UTC(2026, 11, 1, 6, 0, 0)
const row = { resource: 'tokens', window: 'minute', scope: 'account', capacity: 1_000 } as const
const charge: ChargeRequest = { rows: [row], inputTokens: 300, wantOutput: 100, price: null }
// 900 used: whether requests in flight hold it is what the read says.
const refusal = { state: rowState(row, 900, now - 30_000, 60_000), needs: 400, retryAt: now + 30_000 }

describe('a charged refusal whose holds cannot be read', () => {
  // refusalOf counts a refusal toward suspension unless it asks for a retry within seconds: a
  // read that fails must not lose the refusal (nor its count), whether it rejects or throws.
  test('a read that rejects: the refusal is made, not a retry-soon one (so it is counted)', async () => {
    const e = await chargeRefusalError(refusal, charge, () => Promise.reject(new Error('busy')), now, {})
    expect(e.status).toBe(429)
    expect(retriesSoon(e)).toBe(false)
  })

  test('a read that throws before answering: the same', async () => {
    const e = await chargeRefusalError(
      refusal,
      charge,
      () => {
        throw new Error('store closed')
      },
      now,
      {},
    )
    expect(e.status).toBe(429)
    expect(retriesSoon(e)).toBe(false)
  })

  test('a read that says 600 of the 900 are held: a retry-soon refusal (not counted)', async () => {
    const e = await chargeRefusalError(
      refusal,
      charge,
      async () => [rowState(row, 900, now - 30_000, 60_000, 600)],
      now,
      {},
    )
    expect(retriesSoon(e)).toBe(true)
  })
})
