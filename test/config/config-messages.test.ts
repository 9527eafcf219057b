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

  // Audit 64: the other problems were TypeBox's own words ("Expected string length greater or
  // equal to 16"), and a pool's problem had a trailing '/' in its path (`/aliases/2/to/`).
  test('every schema problem says what the setting must be and what it got, at its exact path', () => {
    const doc = testConfigDoc({
      alerts: { webhooks: [{ url: 'ftp://x', secret: 'short', events: [] }] },
      aliases: [
        { id: 'team/a', to: [{ model: 'demo/echo', weight: 0 }] },
        { id: 'nope', to: 'demo/echo' },
        { id: 'team/c', to: [] },
        { id: 'team/e' },
      ],
      server: { host: 5, port: 0 },
    }) as any
    doc.providers[0].models[0].features = ['streaming', 'streaming']
    doc.providers[0].models[1].context_window = 1.5
    doc.providers[0].models[1].fallbacks = 'demo/echo'
    doc.plans.basic.budget = { usd: 0, period: 'day' }
    expect(problems(() => parseConfig(doc))).toEqual([
      { path: '/server/host', message: 'must be a string of at least 1 character (got 5)' },
      {
        path: '/alerts/webhooks/0/url',
        message: "must be an http:// or https:// URL without spaces (got 'ftp://x')",
      },
      {
        path: '/alerts/webhooks/0/secret',
        message: "must be a string of at least 16 characters (got 'short')",
      },
      { path: '/alerts/webhooks/0/events', message: 'must be a list of at least 1 item (got an empty list)' },
      {
        path: '/providers/0/models/0/features',
        message: "must name each value once ('streaming' is there twice)",
      },
      { path: '/providers/0/models/1/context_window', message: 'must be an integer of at least 1 (got 1.5)' },
      { path: '/providers/0/models/1/fallbacks', message: "must be a list (got 'demo/echo')" },
      { path: '/aliases/0/to/0/weight', message: 'must be an integer from 1 to 1000000 (got 0)' },
      { path: '/aliases/1/id', message: "must be a model id, 'prefix/name' without spaces (got 'nope')" },
      { path: '/aliases/2/to', message: 'must be a list of at least 1 item (got an empty list)' },
      { path: '/aliases/3/to', message: 'is required (missing)' },
      { path: '/plans/basic/budget/usd', message: 'must be a number greater than 0 (got 0)' },
    ])
  })
})
