/** Key pools: picks by weight, skipping resting and already-tried keys; rests end on the clock. */
import { describe, expect, test } from 'bun:test'
import { KeyPool, type ModelKeys } from '../../../src/providers/resilience/key-pool.ts'
import { ManualClock } from '../../../src/util/clock.ts'

const keys = (...weights: number[]) => weights.map((weight, i) => ({ apiKey: `sk-${i}`, weight }))
const picks = (pool: ModelKeys, n: number, exclude?: Set<number>) =>
  Array.from({ length: n }, () => pool.pick(exclude)?.index ?? null)

describe('KeyPool', () => {
  test('weights 3 and 1: exactly three in four, interleaved', () => {
    const pool = new KeyPool(keys(3, 1), new ManualClock(0)).forModel('m')
    const got = picks(pool, 400)
    expect(got.filter((i) => i === 0)).toHaveLength(300)
    expect(got.slice(0, 4)).toEqual([0, 0, 1, 0])
    // never more than three of key 0 in a row
    expect(got.join('')).not.toContain('0000')
  })
  test('equal weights alternate; a weight of 0 counts as 1', () => {
    expect(picks(new KeyPool(keys(1, 1, 1), new ManualClock(0)).forModel('m'), 6)).toEqual([0, 1, 2, 0, 1, 2])
    expect(picks(new KeyPool(keys(0, 1), new ManualClock(0)).forModel('m'), 4).sort()).toEqual([0, 0, 1, 1])
  })
  test('a resting key is passed over until its rest ends; the others share its turns', () => {
    const clock = new ManualClock(1000)
    const pool = new KeyPool(keys(1, 1), clock).forModel('m')
    pool.rest(0, 30_000)
    expect(pool.restingUntil(0)).toBe(31_000)
    expect(picks(pool, 3)).toEqual([1, 1, 1])
    clock.advance(29_999)
    expect(pool.pick()?.index).toBe(1)
    clock.advance(1)
    expect(pool.restingUntil(0)).toBe(0)
    expect(new Set(picks(pool, 2))).toEqual(new Set([0, 1]))
  })
  test('a shorter rest does not cut a longer one short', () => {
    const clock = new ManualClock(0)
    const pool = new KeyPool(keys(1), clock).forModel('m')
    pool.rest(0, 10_000)
    pool.rest(0, 1_000)
    expect(pool.restingUntil(0)).toBe(10_000)
  })
  test('keys a request already tried are excluded; none left is null, and nextWake says when one returns', () => {
    const clock = new ManualClock(0)
    const pool = new KeyPool(keys(1, 1, 1), clock).forModel('m')
    expect(pool.pick(new Set([0, 1]))?.index).toBe(2)
    pool.rest(2, 5_000)
    expect(pool.pick(new Set([0, 1]))).toBeNull()
    expect(pool.nextWake(new Set([0, 1]))).toBe(5_000)
    pool.rest(1, 2_000)
    expect(pool.nextWake()).toBe(2_000)
    expect(pool.nextWake(new Set([1]))).toBe(5_000)
    expect(pool.nextWake(new Set([1, 2]))).toBeNull()
  })
  test('nextWake counts only rate limits: a key resting on a cooldown is not one to wait for', () => {
    const clock = new ManualClock(0)
    const pool = new KeyPool(keys(1, 1), clock).forModel('m')
    pool.rest(0, 1_000, 'cooldown')
    expect(pool.restingUntil(0)).toBe(1_000)
    expect(pool.nextWake()).toBeNull()
    pool.rest(1, 3_000)
    expect(pool.nextWake()).toBe(3_000)
  })
  test("a one-key pool's fast path picks as the round-robin does: the same key, rest and exclusion at each step", () => {
    // The round-robin's answer for key 0 alone: a two-key pool whose second key every pick excludes.
    const clock = new ManualClock(0)
    const one = new KeyPool(keys(1), clock).forModel('m')
    const two = new KeyPool(keys(1, 1), clock).forModel('m')
    const steps: [string, (p: ModelKeys) => void, Set<number>][] = [
      ['awake', () => {}, new Set()],
      ['rate-limited', (p) => p.rest(0, 500), new Set()],
      ['still resting', () => {}, new Set()],
      ['its rest over', () => clock.advance(500), new Set()],
      ['tried', () => {}, new Set([0])],
      ['cooling down', (p) => p.rest(0, 1_000, 'cooldown'), new Set()],
      ['cooled', () => clock.advance(1_000), new Set()],
    ]
    const got = steps.map(([name, step, tried]) => {
      step(one)
      step(two)
      const seen = [one.pick(tried)?.index ?? null, two.pick(new Set([...tried, 1]))?.index ?? null]
      return [name, ...seen]
    })
    expect(got.map(([name, a]) => [name, a])).toEqual(got.map(([name, , b]) => [name, b]))
    // It says something: the key is taken and passed over along the way.
    expect(got.map(([, a]) => a)).toEqual([0, null, null, 0, null, null, 0])
  })
  test('a rate limit rests the key for its model only; a cooldown for every model of the provider', () => {
    const clock = new ManualClock(0)
    const provider = new KeyPool(keys(1, 1), clock)
    const busy = provider.forModel('gpt-busy')
    const good = provider.forModel('gpt-good')
    expect(provider.forModel('gpt-busy')).toBe(busy)
    busy.rest(0, 600_000)
    expect([busy.restingUntil(0), good.restingUntil(0)]).toEqual([600_000, 0])
    expect(picks(busy, 2)).toEqual([1, 1])
    expect(new Set(picks(good, 2))).toEqual(new Set([0, 1]))
    expect([busy.nextWake(new Set([1])), good.nextWake()]).toEqual([600_000, null])
    good.rest(1, 5_000, 'cooldown')
    expect([busy.restingUntil(1), good.restingUntil(1)]).toEqual([5_000, 5_000])
    expect(busy.pick()).toBeNull()
    // The cooled key is not waited for: busy's wake is key 0's rate limit.
    expect(busy.nextWake()).toBe(600_000)
  })
  test('a pool needs a key', () => {
    expect(() => new KeyPool([], new ManualClock(0))).toThrow()
  })
})
