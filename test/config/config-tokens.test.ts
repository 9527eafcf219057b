import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, loadConfigFile, parseConfig } from '../../src/config/index.ts'
import { DEMO_PROVIDER, PLANS, tempDir, testConfigDoc } from '../support/config-doc.ts'

function problems(fn: () => unknown): Array<{ path: string; message: string }> {
  try {
    fn()
  } catch (e) {
    if (e instanceof ConfigError) return e.problems
    throw e
  }
  throw new Error('expected a ConfigError')
}

const priced = (pricing: unknown) => {
  const provider = structuredClone(DEMO_PROVIDER) as { models: Array<Record<string, unknown>> }
  provider.models[0]!.pricing = pricing
  return testConfigDoc({ providers: [provider] })
}

const withPlan = (plan: Record<string, unknown>) =>
  testConfigDoc({ plans: { ...PLANS, free: { ...PLANS.free, ...plan } } })

// DESIGN §11's example, in the contract's flow style.
const SECTION_11 = `
providers:
  - prefix: openai
    kind: openai
    base_url: https://api.openai.com/v1
    api_key: sk-test
    models:
      - { name: gpt-4o-mini, context_window: 128000, max_output_tokens: 16384, features: [streaming],
          pricing: { input: 0.15, output: 0.60, cached_input: 0.075 } }
plans:
  free: { rpm: 5, rpd: 100, tpm: 20000, tpd: 200000, max_context_tokens: 8192, models: ["openai/*"] }
  pro:  { rpm: 10, rpd: null, tpm: null, tpd: null, budget: { usd: 50, period: month }, models: ["*"] }
default_plan: free
`

describe('config: tokens and money (DESIGN §11)', () => {
  test('the contract’s §11 example parses, with its values kept', async () => {
    const f = join(tempDir(), 'tokens.yaml')
    writeFileSync(f, SECTION_11)
    const c = await loadConfigFile(f, {})
    expect(c.plans.free).toMatchObject({ tpm: 20_000, tpd: 200_000, max_context_tokens: 8_192 })
    expect(c.plans.pro).toMatchObject({ tpm: null, tpd: null, budget: { usd: 50, period: 'month' } })
    expect(c.providers[0]!.models[0]!.pricing).toEqual({ input: 0.15, output: 0.6, cached_input: 0.075 })
  })

  test('plans without the new keys are as before (no limits, free models)', () => {
    const c = parseConfig(testConfigDoc())
    expect(c.plans.free).toEqual({ rpm: 5, rpd: 100, models: ['tier:free'] })
    expect(c.providers[0]!.models[0]!.pricing).toBeUndefined()
  })

  test('all pricing fields, reasoning and cache writes included', () => {
    const c = parseConfig(
      priced({ input: 3, output: 15, cached_input: 0.3, cache_write: 3.75, reasoning: 15 }),
    )
    expect(c.providers[0]!.models[0]!.pricing).toMatchObject({ cache_write: 3.75, reasoning: 15 })
  })

  test('pricing: missing output, negative prices, wrong types and unknown keys name their paths', () => {
    const at = '/providers/0/models/0/pricing'
    expect(problems(() => parseConfig(priced({ input: 1 }))).map((p) => p.path)).toContain(`${at}/output`)
    expect(problems(() => parseConfig(priced({ input: -1, output: 1 }))).map((p) => p.path)).toContain(
      `${at}/input`,
    )
    expect(problems(() => parseConfig(priced({ input: '0.15', output: 1 }))).map((p) => p.path)).toContain(
      `${at}/input`,
    )
    expect(problems(() => parseConfig(priced({ input: 1, output: 1, cached: 1 })))).toContainEqual({
      path: `${at}/cached`,
      message: 'unknown key (check the spelling)',
    })
  })

  test('a price with more than 6 decimals is refused, not rounded to nothing', () => {
    expect(problems(() => parseConfig(priced({ input: 0.0000001, output: 1 })))).toContainEqual({
      path: '/providers/0/models/0/pricing/input',
      message: '1e-7 has more than 6 decimals; prices are USD per 1M tokens, kept to the micro-dollar',
    })
    expect(() => parseConfig(priced({ input: 0.000001, output: 0.075 }))).not.toThrow()
  })

  test('surcharge prices (DESIGN §11): service tiers and per-call tools; unknown ones and 7 decimals named', () => {
    const at = '/providers/0/models/0/pricing'
    const c = parseConfig(
      priced({
        input: 2.5,
        output: 10,
        service_tier: {
          priority: { input: 4.25, output: 17 },
          flex: { input: 1.25, output: 5, cached_input: 0.125 },
        },
        per_call: { web_search: 0.01, file_search: 0.0025, code_interpreter: 0.03 },
      }),
    )
    expect(c.providers[0]!.models[0]!.pricing?.service_tier?.priority).toEqual({ input: 4.25, output: 17 })
    expect(c.providers[0]!.models[0]!.pricing?.per_call?.web_search).toBe(0.01)
    expect(
      problems(() =>
        parseConfig(priced({ input: 1, output: 1, service_tier: { turbo: { input: 1, output: 1 } } })),
      ),
    ).toContainEqual({
      path: `${at}/service_tier/turbo`,
      message: 'unknown key (check the spelling)',
    })
    expect(
      problems(() => parseConfig(priced({ input: 1, output: 1, per_call: { image_generation: 0.04 } }))),
    ).toContainEqual({
      path: `${at}/per_call/image_generation`,
      message: 'unknown key (check the spelling)',
    })
    expect(
      problems(() =>
        parseConfig(priced({ input: 1, output: 1, service_tier: { priority: { input: 1 } } })),
      ).map((p) => p.path),
    ).toContain(`${at}/service_tier/priority/output`)
    expect(
      problems(() => parseConfig(priced({ input: 1, output: 1, per_call: { web_search: 0.0000001 } }))),
    ).toContainEqual({
      path: `${at}/per_call/web_search`,
      message: '1e-7 has more than 6 decimals; prices are USD per call, kept to the micro-dollar',
    })
    expect(
      problems(() =>
        parseConfig(priced({ input: 1, output: 1, service_tier: { priority: { input: 1e-7, output: 1 } } })),
      ),
    ).toContainEqual({
      path: `${at}/service_tier/priority/input`,
      message: '1e-7 has more than 6 decimals; prices are USD per 1M tokens, kept to the micro-dollar',
    })
  })

  test('tpm, tpd, max_context_tokens: positive integers or null', () => {
    for (const key of ['tpm', 'tpd', 'max_context_tokens']) {
      expect(parseConfig(withPlan({ [key]: null })).plans.free![key as 'tpm']).toBeNull()
      expect(problems(() => parseConfig(withPlan({ [key]: 0 }))).map((p) => p.path)).toContain(
        `/plans/free/${key}`,
      )
      expect(problems(() => parseConfig(withPlan({ [key]: 1.5 }))).map((p) => p.path)).toContain(
        `/plans/free/${key}`,
      )
      expect(problems(() => parseConfig(withPlan({ [key]: '1000' }))).map((p) => p.path)).toContain(
        `/plans/free/${key}`,
      )
    }
  })

  test('budget: absent or usd above 0 with at most 6 decimals and a calendar period, nothing else', () => {
    expect(parseConfig(withPlan({ budget: { usd: 0.01, period: 'day' } })).plans.free!.budget).toEqual({
      usd: 0.01,
      period: 'day',
    })
    expect(parseConfig(withPlan({})).plans.free!.budget).toBeUndefined()
    const paths = (budget: unknown) => problems(() => parseConfig(withPlan({ budget }))).map((p) => p.path)
    expect(paths({ usd: 0, period: 'month' })).toContain('/plans/free/budget/usd')
    expect(paths({ usd: 10, period: 'year' })).toContain('/plans/free/budget/period')
    expect(paths({ usd: 10 })).toContain('/plans/free/budget/period')
    expect(paths({ usd: 10, period: 'week', rollover: true })).toContain('/plans/free/budget/rollover')
    expect(
      problems(() => parseConfig(withPlan({ budget: { usd: 1.0000001, period: 'week' } }))),
    ).toContainEqual({
      path: '/plans/free/budget/usd',
      message: '1.0000001 has more than 6 decimals (or is too large); budgets are kept to the micro-dollar',
    })
  })
})
