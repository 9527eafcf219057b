/**
 * Audit finding 9: what a problem says. A union-typed setting said only "Expected union value"
 * (kind, logging.level, features[i], budget.period, on_expiry, rpm: 0); it now says the values
 * it takes, and a mapping where a mapping belongs is checked key by key (`on_expiry: { downgrade:
 * free, after: 1 }` names `after`). A YAML syntax error says near which line.
 */
import { describe, expect, test } from 'bun:test'
import { parseConfig } from '../../src/config/index.ts'
import { testConfigDoc } from '../support/config-doc.ts'
import { problems } from './problems.ts'

describe('messages', () => {
  test('a union-typed setting says the values it takes, and what it got', () => {
    const doc = testConfigDoc({ logging: { level: 'verbose' } }) as any
    doc.providers[0].kind = 'demoo'
    doc.providers[0].models[0].features.push('telepathy')
    doc.plans.free.rpm = 0
    doc.plans.pro.on_expiry = 'disabled'
    doc.plans.unlimited.budget = { usd: 1, period: 'year' }
    expect(problems(() => parseConfig(doc))).toEqual([
      { path: '/logging/level', message: "must be one of debug, info, warn, error (got 'verbose')" },
      { path: '/providers/0/kind', message: "must be one of openai, anthropic, gemini, demo (got 'demoo')" },
      {
        path: '/providers/0/models/0/features/4',
        message: expect.stringMatching(/^must be one of streaming, tools, .*, prefill \(got 'telepathy'\)$/),
      },
      { path: '/plans/free/rpm', message: 'must be an integer of at least 1, or null (got 0)' },
      {
        path: '/plans/pro/on_expiry',
        message: "must be 'disable', or a mapping { downgrade } (got 'disabled')",
      },
      { path: '/plans/unlimited/budget/period', message: "must be one of day, week, month (got 'year')" },
    ])
  })

  test('on_expiry: { downgrade: free, after: 1 } names the unknown key', () => {
    const doc = testConfigDoc() as any
    doc.plans.basic.on_expiry = { downgrade: 'free', after: 1 }
    expect(problems(() => parseConfig(doc))).toEqual([
      { path: '/plans/basic/on_expiry/after', message: 'unknown key (check the spelling)' },
    ])
  })

  test('a mapping missing what its branch needs says so at the path', () => {
    const doc = testConfigDoc() as any
    doc.plans.basic.on_expiry = { downgarde: 'free' }
    expect(problems(() => parseConfig(doc)).map((p) => p.path)).toEqual([
      '/plans/basic/on_expiry/downgrade',
      '/plans/basic/on_expiry/downgarde',
    ])
  })
})
