/** A key's own limits: changes, their checks, and "within the account's plan" (DESIGN §11). */
import { describe, expect, test } from 'bun:test'
import { applyPatch, checkWithinPlan, keyLimitsView, NO_LIMITS } from '../../src/accounts/key-limits.ts'
import type { PlanConfig } from '../../src/config/index.ts'
import { GatewayError } from '../../src/util/errors.ts'
import { DEMO_PROVIDER } from '../support/config-doc.ts'

const config = { providers: [{ ...DEMO_PROVIDER, models: DEMO_PROVIDER.models }] } as any
const plan = (p: Partial<PlanConfig>): PlanConfig =>
  ({ rpm: 10, rpd: 100, models: ['tier:free'], ...p }) as PlanConfig

function refusal(fn: () => unknown): { param: string | null | undefined; message: string } {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError)
    const e = err as GatewayError
    expect(e.status).toBe(400)
    return { param: e.param, message: e.message }
  }
  throw new Error('expected a refusal')
}

describe('applyPatch', () => {
  test('sets, keeps and clears; budgets in integer micro-dollars', () => {
    const a = applyPatch(NO_LIMITS, { tpm: 5000, budget: { usd: 0.1, period: 'day' }, models: ['demo/echo'] })
    expect(a).toEqual({
      rpm: null,
      rpd: null,
      tpm: 5000,
      tpd: null,
      budgetMicros: 100_000,
      budgetPeriod: 'day',
      models: ['demo/echo'],
    })
    // Absent fields are kept; the period is kept when only the amount changes.
    const b = applyPatch(a, { rpm: 3, budget: { usd: 2.5 } })
    expect(b).toMatchObject({ rpm: 3, tpm: 5000, budgetMicros: 2_500_000, budgetPeriod: 'day' })
    const c = applyPatch(b, { tpm: null, budget: null, models: null })
    expect(c).toMatchObject({ rpm: 3, tpm: null, budgetMicros: null, budgetPeriod: null, models: null })
    expect(keyLimitsView(a)).toEqual({
      rpm: null,
      rpd: null,
      tpm: 5000,
      tpd: null,
      budget: { usd: 0.1, period: 'day' },
      models: ['demo/echo'],
    })
    expect(keyLimitsView(null).budget).toBeNull()
  })

  test('every bad value is a 400 naming its field', () => {
    expect(refusal(() => applyPatch(NO_LIMITS, { rpm: 0 })).param).toBe('rpm')
    expect(refusal(() => applyPatch(NO_LIMITS, { tpd: 1.5 })).param).toBe('tpd')
    expect(refusal(() => applyPatch(NO_LIMITS, { tpm: '5' as never })).param).toBe('tpm')
    expect(refusal(() => applyPatch(NO_LIMITS, { budget: { usd: 1 } })).param).toBe('budget.period')
    expect(refusal(() => applyPatch(NO_LIMITS, { budget: { usd: 0, period: 'day' } })).param).toBe(
      'budget.usd',
    )
    expect(refusal(() => applyPatch(NO_LIMITS, { budget: { usd: 0.0000001, period: 'day' } })).param).toBe(
      'budget.usd',
    )
    expect(refusal(() => applyPatch(NO_LIMITS, { budget: { usd: 1, period: 'year' as never } })).param).toBe(
      'budget.period',
    )
    expect(refusal(() => applyPatch(NO_LIMITS, { models: [] })).param).toBe('models')
    expect(refusal(() => applyPatch(NO_LIMITS, { rpm: -1 }, 'limits.')).param).toBe('limits.rpm')
  })
})

describe('checkWithinPlan', () => {
  const within = (limits: Parameters<typeof applyPatch>[1], p: Partial<PlanConfig>) => () =>
    checkWithinPlan(applyPatch(NO_LIMITS, limits), 'free', plan(p), config)

  test('counts at or below the plan, or where the plan sets none, pass; above is refused', () => {
    within({ rpm: 10, rpd: 50, tpm: 1000 }, { tpm: 20_000 })()
    within({ tpd: 5_000_000 }, { tpd: null })()
    const r = refusal(within({ tpm: 20_001 }, { tpm: 20_000 }))
    expect(r.param).toBe('tpm')
    expect(r.message).toContain("plan 'free' (tpm 20000)")
    expect(refusal(within({ rpm: 11 }, {})).param).toBe('rpm')
  })

  test("a budget is within when it can be reached inside the plan's", () => {
    within({ budget: { usd: 50, period: 'month' } }, { budget: { usd: 50, period: 'month' } })()
    within({ budget: { usd: 5, period: 'day' } }, { budget: { usd: 50, period: 'month' } })()
    // A month's budget on a daily plan budget can be reached over several days.
    within({ budget: { usd: 30, period: 'month' } }, { budget: { usd: 5, period: 'day' } })()
    within({ budget: { usd: 1000, period: 'week' } }, {})()
    const r = refusal(
      within({ budget: { usd: 100, period: 'day' } }, { budget: { usd: 50, period: 'month' } }),
    )
    expect(r.param).toBe('budget.usd')
    expect(r.message).toContain('$100.00 a day')
    expect(r.message).toContain('$50.00 a month')
  })

  test('models must exist and be in the plan', () => {
    within({ models: ['demo/echo'] }, {})()
    expect(refusal(within({ models: ['demo/echo-pro'] }, {})).message).toContain(
      "not in the account's plan 'free'",
    )
    expect(refusal(within({ models: ['demo/nope'] }, { models: ['*'] })).message).toContain(
      "provider 'demo' has no model 'nope'",
    )
    within({ models: ['demo/echo-pro', 'demo/echo'] }, { models: ['*'] })()
  })

  // A key's list takes what a plan's takes (DESIGN §13); it refused all but exact ids.
  test("a key's list takes a plan's forms: *, prefix/*, tier:NAME; each must reach a model of the plan", () => {
    for (const entry of ['*', 'demo/*', 'tier:free']) within({ models: [entry] }, {})()
    expect(refusal(within({ models: ['tier:pro'] }, {})).message).toBe(
      "models: 'tier:pro' is not in the account's plan 'free'",
    )
    within({ models: ['tier:pro'] }, { models: ['*'] })()
    for (const [entry, message] of [
      ['tier:nope', "no model has tier 'nope' (the tiers: free, pro)"],
      ['nope/*', "no provider has prefix 'nope'"],
      ['demo', "'demo' is not 'prefix/name', 'prefix/*', 'tier:NAME' or '*'"],
    ]) {
      expect(refusal(within({ models: [entry!] }, { models: ['*'] }))).toEqual({
        param: 'models',
        message: `models: ${message}; see GET /v1/models or switchyard models`,
      })
    }
  })
})
