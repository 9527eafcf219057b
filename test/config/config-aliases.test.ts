/**
 * The `aliases:` list in the config (DESIGN §13): what loads, and each problem named with its
 * path — an unknown target, a loop, two patterns that tie, an id given twice, an alias shadowing a
 * model id, a pool as a target, a typo inside a pool member; plans naming an alias by its id.
 */
import { describe, expect, test } from 'bun:test'
import { parseConfig } from '../../src/config/index.ts'
import { testConfigDoc } from '../support/gateway.ts'
import { problems } from './problems.ts'

const load = (aliases: unknown[], plans?: Record<string, unknown>) =>
  parseConfig(
    testConfigDoc({ aliases, ...(plans ? { plans, default_plan: Object.keys(plans)[0] } : {}) }),
    'test',
  )
const problemsOf = (aliases: unknown[], plans?: Record<string, unknown>) =>
  problems(() => load(aliases, plans))

describe('aliases in the config', () => {
  test('exact ids, patterns, pools and chains load; plans may name an alias or its prefix', () => {
    const config = load(
      [
        { id: 'team/fast', to: 'demo/echo' },
        { id: 'team/faster', to: 'team/fast' },
        { id: 'demo/echo-2025-*', to: 'demo/echo' },
        { id: 'team/pool', to: [{ model: 'demo/echo', weight: 3 }, { model: 'team/faster' }], listed: false },
      ],
      { one: { rpm: null, rpd: null, models: ['team/fast', 'team/*'] } },
    )
    expect(config.aliases.map((a) => a.id)).toEqual([
      'team/fast',
      'team/faster',
      'demo/echo-2025-*',
      'team/pool',
    ])
  })

  test('an unknown target is named with its path, a pool member at its own', () => {
    expect(
      problemsOf([
        { id: 'team/a', to: 'demo/nope' },
        { id: 'team/b', to: [{ model: 'demo/echo' }, { model: 'openai/gpt-5', weight: 2 }] },
      ]),
    ).toEqual([
      {
        path: '/aliases/0/to',
        message: "no model or alias 'demo/nope' (provider 'demo' has no model 'nope')",
      },
      {
        path: '/aliases/1/to/1/model',
        message:
          "no model or alias 'openai/gpt-5' (no provider has prefix 'openai' and no alias has this id)",
      },
    ])
  })

  test("an alias under a provider's prefix leading outside it is named: 'demo/*' would reach it", () => {
    expect(
      problemsOf([
        { id: 'demo/premium', to: 'team/x' },
        { id: 'team/x', to: 'demo/echo' },
        { id: 'demo/same', to: 'demo/echo' },
      ]).map((p) => p.path),
    ).toEqual(['/aliases/0/to'])
  })

  test('a loop of aliases is named', () => {
    const found = problemsOf([
      { id: 'team/a', to: 'team/b' },
      { id: 'team/b', to: 'team/a' },
    ])
    expect(found).toContainEqual({
      path: '/aliases/0/to',
      message: 'a loop of aliases: team/a → team/b → team/a',
    })
    expect(found).toContainEqual({
      path: '/aliases/1/to',
      message: 'a loop of aliases: team/b → team/a → team/b',
    })
  })

  test('two patterns that tie are named; a longer one is no tie', () => {
    expect(
      problemsOf([
        { id: 'demo/echo-*', to: 'demo/echo' },
        { id: 'demo/*o-pro', to: 'demo/echo-pro' },
        { id: 'demo/echo-2025*', to: 'demo/echo' },
      ]),
    ).toEqual([
      {
        path: '/aliases/1/id',
        message:
          "ties with aliases[0] ('demo/echo-*'): some id matches both and neither is longer, so neither would win; make one of them longer",
      },
    ])
  })

  test('a duplicate id, a model id, a pool as a target, a pattern as a target, a member twice', () => {
    expect(
      problemsOf([
        { id: 'team/a', to: 'demo/echo' },
        { id: 'team/a', to: 'demo/echo-pro' },
        { id: 'demo/echo', to: 'demo/echo-pro' },
        { id: 'team/pool', to: [{ model: 'demo/echo' }, { model: 'demo/echo-pro' }] },
        { id: 'team/b', to: 'team/pool' },
        { id: 'team/c', to: 'demo/*' },
        { id: 'team/d', to: [{ model: 'demo/echo' }, { model: 'demo/echo' }] },
      ]).map((p) => p.path),
    ).toEqual(['/aliases/1/id', '/aliases/2/id', '/aliases/4/to', '/aliases/5/to', '/aliases/6/to/1/model'])
  })

  test("a typo inside a pool member is named at its path; a plan's unknown alias too", () => {
    expect(problemsOf([{ id: 'team/a', to: [{ model: 'demo/echo', wieght: 2 }] }])).toEqual([
      { path: '/aliases/0/to/0/wieght', message: 'unknown key (check the spelling)' },
    ])
    expect(
      problemsOf([{ id: 'team/a', to: 'demo/echo' }], { one: { rpm: null, rpd: null, models: ['team/b'] } }),
    ).toEqual([
      {
        path: '/plans/one/models/0',
        message: "no provider has prefix 'team' and no alias has the id 'team/b'",
      },
    ])
  })
})
