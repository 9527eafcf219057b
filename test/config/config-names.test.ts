/**
 * Audit finding 1: a `T.Record` keyed by a pattern became `patternProperties` alone, so a plan
 * whose name broke the pattern (`"pro plan"`) was never validated at all — `rpm: lots` and a
 * misspelt `rpdd` passed `config check`, and a missing `models` crashed the cross checks. Every
 * map in the schema now refuses a key outside its pattern, naming the key and the pattern, and
 * still checks the value under it.
 */
import { describe, expect, test } from 'bun:test'
import { parseConfig } from '../../src/config/index.ts'
import { cli } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { writeConfig } from '../support/process.ts'
import { DEMO_ONLY, problems, textProblems } from './problems.ts'

describe('map keys are validated', () => {
  test('a plan name with a space is an error naming it and the pattern, and its settings are still checked', async () => {
    const found = await textProblems(
      `${DEMO_ONLY}plans:\n  free: { rpm: 1, rpd: 1, models: ["*"] }\n  "pro plan": { rpm: lots, rpdd: 1, models: ["*"] }\ndefault_plan: free\n`,
    )
    expect(found).toContainEqual({
      path: '/plans/pro plan',
      message: expect.stringMatching(/plan name 'pro plan'.*\^\[A-Za-z0-9\._-\]\+\$/),
    })
    expect(found.map((p) => p.path)).toEqual(
      expect.arrayContaining(['/plans/pro plan/rpm', '/plans/pro plan/rpdd']),
    )
  })

  test('a badly named plan without models is a config error, not a crash', async () => {
    const found = await textProblems(
      `${DEMO_ONLY}plans:\n  free: { rpm: 1, rpd: 1, models: ["*"] }\n  "pro plan": { rpm: lots, rpdd: 1 }\ndefault_plan: free\n`,
    )
    expect(found.map((p) => p.path)).toEqual(
      expect.arrayContaining(['/plans/pro plan', '/plans/pro plan/models', '/plans/pro plan/rpm']),
    )
  })

  // Paths are JSON pointers, as TypeBox writes them: '/' in a key is '~1'.
  test.each([
    ['pro/plan', 'pro~1plan'],
    ['ümlaut', 'ümlaut'],
    ['', ''],
  ])('plan name %p is refused', (name, step) => {
    const doc = testConfigDoc({
      plans: { free: { rpm: 1, rpd: 1, models: ['*'] }, [name]: { rpm: 1, rpd: 1, models: ['*'] } },
    })
    expect(problems(() => parseConfig(doc))).toContainEqual({
      path: `/plans/${step}`,
      message: expect.stringContaining(`plan name '${name}' is not allowed`),
    })
  })

  test('an upstream header name that HTTP cannot carry, or a value with a line break, is refused', () => {
    const doc = testConfigDoc() as any
    doc.providers[0].headers = { 'x org': 'a', 'x-ok': 'b\r\nx-injected: 1', 'OpenAI-Organization': 'org-1' }
    const found = problems(() => parseConfig(doc))
    expect(found).toContainEqual({
      path: '/providers/0/headers/x org',
      message: expect.stringContaining("header name 'x org'"),
    })
    expect(found.map((p) => p.path)).toContain('/providers/0/headers/x-ok')
    expect(found).toHaveLength(2)
  })

  test('valid plan names and headers still load', () => {
    const doc = testConfigDoc() as any
    doc.providers[0].headers = { 'OpenAI-Organization': 'org-1', 'x-a.b_c~1': 'v: w' }
    doc.plans['team.v2_x-1'] = { rpm: 1, rpd: 1, models: ['*'] }
    const c = parseConfig(doc)
    expect(Object.keys(c.plans)).toContain('team.v2_x-1')
    expect(c.providers[0]!.headers).toEqual({ 'OpenAI-Organization': 'org-1', 'x-a.b_c~1': 'v: w' })
  })
})

// A plan that named `demo/ecoh` loaded, and every request of its accounts to demo/echo was a 403
// model_not_in_plan: a typo silently changed what the plan allows.
describe("a plan's model ids name models that exist", () => {
  test('an id whose provider has no such model is an error naming the models it has', () => {
    const doc = testConfigDoc({
      plans: { free: { rpm: 1, rpd: 1, models: ['demo/ecoh', 'demo/*', 'tier:free', '*'] } },
    })
    expect(problems(() => parseConfig(doc))).toEqual([
      {
        path: '/plans/free/models/0',
        message: expect.stringMatching(/provider 'demo' has no model 'ecoh' \(its models: echo/),
      },
    ])
  })

  // A mistyped tier passed: a plan of `tier:nope` allowed nothing, every request a 403.
  test('a tier no model has is an error naming the tiers there are, in config check too', async () => {
    const doc = testConfigDoc({
      plans: { free: { rpm: 1, rpd: 1, models: ['tier:nope', 'nope/x', 'tier:pro', 'tier:free'] } },
    })
    const check = await cli(['config', 'check', '--json', '--config', writeConfig(tempDir(), doc)])
    expect(check.code).toBe(1)
    expect(check.json().problems).toEqual([
      { path: '/plans/free/models/0', message: "no model has tier 'nope' (the tiers: free, pro)" },
      { path: '/plans/free/models/1', message: "no provider has prefix 'nope'" },
    ])
    const tierless = testConfigDoc({
      providers: [
        {
          prefix: 'demo',
          kind: 'demo',
          models: [{ name: 'echo', context_window: 8, max_output_tokens: 1, features: [] }],
        },
      ],
      plans: { free: { rpm: 1, rpd: 1, models: ['tier:free'] } },
    })
    expect(problems(() => parseConfig(tierless))).toEqual([
      { path: '/plans/free/models/0', message: "no model has tier 'free' (no model has a tier)" },
    ])
  })

  test('an existing id loads, and a provider whose models are invalid is not judged twice', async () => {
    expect(
      parseConfig(testConfigDoc({ plans: { free: { rpm: 1, rpd: 1, models: ['demo/echo'] } } })),
    ).toBeTruthy()
    const found = await textProblems(
      `providers:\n  - prefix: demo\n    kind: demo\n    models:\n      - { name: echo, context_windw: 10, max_output_tokens: 1, features: [] }\nplans:\n  free: { rpm: 1, rpd: 1, models: ["demo/other"] }\ndefault_plan: free\n`,
    )
    expect(found.map((p) => p.path)).not.toContain('/plans/free/models/0')
  })
})
