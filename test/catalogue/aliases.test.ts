/**
 * The catalogue's aliases (DESIGN §13) without a server: lookup order (model, alias, pattern; the
 * longest pattern wins), a pool's order (the round-robin's pick, then the others by weight), what a
 * plan or key reaches through an alias, the request's fallbacks, and the id patterns themselves.
 */
import { describe, expect, test } from 'bun:test'
import { fallbacksOf, reachable } from '../../src/catalogue/reach.ts'
import { Catalogue, planAllows } from '../../src/catalogue/routing.ts'
import { literalLength, matchesPieces, patternPieces, patternsOverlap } from '../../src/util/id-pattern.ts'
import { SmoothRoundRobin } from '../../src/util/smooth-round-robin.ts'
import { gatewayError, PROVIDERS } from '../surfaces/chat/helpers.ts'

const matchesPattern = (pattern: string, id: string) => matchesPieces(patternPieces(pattern), id)

const catalogue = new Catalogue(PROVIDERS, [
  { id: 'team/mini', to: 'openai/gpt-4o-mini' },
  { id: 'team/mini2', to: 'team/mini' },
  { id: 'demo/*', to: 'demo/full' },
  { id: 'demo/echo-*', to: 'demo/echo' },
  {
    id: 'team/pool',
    to: [
      { model: 'demo/echo', weight: 1 },
      { model: 'demo/full', weight: 2 },
      { model: 'demo/cold', weight: 2 },
    ],
  },
  { id: 'team/hidden', to: 'demo/cold', listed: false },
])
const ids = (id: string) => catalogue.route(id).members.map((m) => m.id)

describe('lookup', () => {
  test('a model first, then an exact alias (a chain followed), then the longest pattern', () => {
    expect(ids('demo/echo')).toEqual(['demo/echo'])
    expect(ids('team/mini2')).toEqual(['openai/gpt-4o-mini'])
    expect(ids('demo/echo-20251001')).toEqual(['demo/echo'])
    expect(ids('demo/anything')).toEqual(['demo/full'])
  })

  test('an id nothing names is 404 as before, saying no alias has it under an alias prefix', () => {
    const e = gatewayError(() => catalogue.route('team/none'), {
      status: 404,
      code: 'model_not_found',
      param: 'model',
    })
    expect(e.message).toContain('"team/none" does not exist: no alias has this id')
  })
})

describe('a pool', () => {
  test('the pick first, then the others by weight (config order among equals)', () => {
    const orders = Array.from({ length: 5 }, () => ids('team/pool'))
    // Weights 1:2:2 → full, cold, echo, full, cold; the rest follow heaviest first.
    expect(orders).toEqual([
      ['demo/full', 'demo/cold', 'demo/echo'],
      ['demo/cold', 'demo/full', 'demo/echo'],
      ['demo/echo', 'demo/full', 'demo/cold'],
      ['demo/full', 'demo/cold', 'demo/echo'],
      ['demo/cold', 'demo/full', 'demo/echo'],
    ])
  })

  test('smooth weighted round-robin interleaves, and skips what is not eligible', () => {
    const rr = new SmoothRoundRobin([3, 1])
    expect(Array.from({ length: 8 }, () => rr.pick())).toEqual([0, 0, 1, 0, 0, 0, 1, 0])
    expect(rr.pick((i) => i === 1)).toBe(1)
    expect(rr.pick(() => false)).toBeNull()
  })
})

describe('reach', () => {
  const byPlan = (models: string[]) => (id: string, tier: string | undefined) =>
    planAllows(models, id, { tier })
  test('a listed alias by its id only; an unlisted one through its targets; a pattern as its target', () => {
    expect(reachable(catalogue.route('team/mini'), byPlan(['team/mini'])).map((m) => m.id)).toEqual([
      'openai/gpt-4o-mini',
    ])
    expect(reachable(catalogue.route('team/mini'), byPlan(['openai/*']))).toEqual([])
    expect(reachable(catalogue.route('team/hidden'), byPlan(['demo/cold'])).map((m) => m.id)).toEqual([
      'demo/cold',
    ])
    expect(reachable(catalogue.route('demo/echo-1'), byPlan(['tier:free'])).map((m) => m.id)).toEqual([
      'demo/echo',
    ])
    expect(reachable(catalogue.route('demo/echo-1'), byPlan(['demo/echo-*']))).toEqual([])
    expect(reachable(catalogue.route('openai/gpt-4o-mini'), byPlan(['team/mini']))).toEqual([])
  })

  test("fallbacks: the pool's other members first, then the targets' own the plan allows, each once", () => {
    const [a, b] = [catalogue.resolve('demo/echo'), catalogue.resolve('demo/full')]
    const withFallbacks = {
      ...a,
      model: { ...a.model, fallbacks: ['openai/gpt-4o-mini', 'demo/full', 'demo/cold'] },
    }
    const out = fallbacksOf(
      withFallbacks,
      [withFallbacks, b],
      (id) => catalogue.model(id),
      (e) => e.id !== 'demo/cold',
    )
    expect(out.map((e) => e.id)).toEqual(['demo/full', 'openai/gpt-4o-mini'])
  })
})

describe('id patterns', () => {
  test('match as a whole; overlap when some id matches both', () => {
    expect(matchesPattern('a/claude-*', 'a/claude-3')).toBe(true)
    expect(matchesPattern('a/*-x', 'a/y-xz')).toBe(false)
    expect(matchesPattern('a*a', 'a')).toBe(false)
    expect(matchesPattern('*a*b*', 'xaxb')).toBe(true)
    expect(patternsOverlap('a/*-x', 'a/y-*')).toBe(true)
    expect(patternsOverlap('a/x*', 'a/y*')).toBe(false)
    expect(patternsOverlap('*a', '*b')).toBe(false)
    expect(literalLength('a/claude-*')).toBe(9)
  })
})
