/** Circuits per (key, model): open after N consecutive failures, one half-open probe after the cooldown. */
import { describe, expect, test } from 'bun:test'
import { Circuit, CircuitBoard } from '../../../src/providers/resilience/circuit.ts'
import { ManualClock } from '../../../src/util/clock.ts'

const policy = { failures: 3, cooldownMs: 10_000 }
const setup = () => {
  const clock = new ManualClock(0)
  return { clock, c: new Circuit(policy, clock) }
}
const open = (c: Circuit) => {
  for (let i = 0; i < policy.failures; i++) c.failure()
}

describe('Circuit', () => {
  test('closed until `failures` consecutive failures; a success in between resets the count', () => {
    const { c } = setup()
    c.failure()
    c.failure()
    c.success()
    c.failure()
    c.failure()
    expect([c.state(), c.admit()]).toEqual(['closed', 'pass'])
    c.failure()
    expect([c.state(), c.admit()]).toEqual(['open', 'skip'])
  })
  test('after the cooldown exactly one probe goes through; the rest skip while it is out', () => {
    const { c, clock } = setup()
    open(c)
    clock.advance(9_999)
    expect(c.admit()).toBe('skip')
    clock.advance(1)
    expect(c.state()).toBe('half_open')
    expect(c.admit()).toBe('probe')
    expect([c.admit(), c.admit()]).toEqual(['skip', 'skip'])
  })
  test('admits() answers what admit() would do, without taking the turn; state() is only the gauge', () => {
    const { c, clock } = setup()
    // [state for the gauge, admits, admit]
    const ask = () => [c.state(), c.admits(), c.admits() ? c.admit() : 'skip']
    expect(ask()).toEqual(['closed', true, 'pass'])
    open(c)
    expect(ask()).toEqual(['open', false, 'skip'])
    clock.advance(10_000)
    expect([c.admits(), c.admits()]).toEqual([true, true])
    expect(ask()).toEqual(['half_open', true, 'probe'])
    // Half-open on the gauge, but its one probe is out: nothing else is admitted.
    expect(ask()).toEqual(['half_open', false, 'skip'])
    expect(c.admit()).toBe('skip')
    c.release()
    expect(ask()).toEqual(['half_open', true, 'probe'])
  })
  test('the probe’s success closes the circuit', () => {
    const { c, clock } = setup()
    open(c)
    clock.advance(10_000)
    expect(c.admit()).toBe('probe')
    c.success()
    expect([c.state(), c.admit(), c.admit()]).toEqual(['closed', 'pass', 'pass'])
    // and it takes `failures` new failures to open again
    c.failure()
    c.failure()
    expect(c.state()).toBe('closed')
  })
  test('the probe’s failure opens it for another full cooldown', () => {
    const { c, clock } = setup()
    open(c)
    clock.advance(10_000)
    expect(c.admit()).toBe('probe')
    clock.advance(500)
    c.failure()
    expect(c.state()).toBe('open')
    clock.advance(9_999)
    expect(c.admit()).toBe('skip')
    clock.advance(1)
    expect(c.admit()).toBe('probe')
  })
  test('a probe released without a verdict hands the turn to the next request', () => {
    const { c, clock } = setup()
    open(c)
    clock.advance(10_000)
    expect(c.admit()).toBe('probe')
    c.release()
    expect(c.admit()).toBe('probe')
  })
  test('a probe never settled stops blocking after a cooldown', () => {
    const { c, clock } = setup()
    open(c)
    clock.advance(10_000)
    expect(c.admit()).toBe('probe')
    clock.advance(9_999)
    expect(c.admit()).toBe('skip')
    clock.advance(1)
    expect(c.admit()).toBe('probe')
  })
  test('late failures of requests admitted before it opened do not extend the cooldown', () => {
    const { c, clock } = setup()
    open(c)
    clock.advance(5_000)
    c.failure()
    clock.advance(5_000)
    expect(c.admit()).toBe('probe')
  })
})

describe('CircuitBoard', () => {
  test('one circuit per (provider, key, model); states for the gauge', () => {
    const clock = new ManualClock(0)
    const board = new CircuitBoard(clock)
    const a = board.get({ provider: 'openai', key: 0, model: 'gpt-4o' }, policy)
    expect(board.get({ provider: 'openai', key: 0, model: 'gpt-4o' }, policy)).toBe(a)
    const b = board.get({ provider: 'openai', key: 1, model: 'gpt-4o' }, policy)
    expect(b).not.toBe(a)
    open(a)
    expect(board.states()).toEqual([
      { provider: 'openai', key: 0, model: 'gpt-4o', state: 'open' },
      { provider: 'openai', key: 1, model: 'gpt-4o', state: 'closed' },
    ])
  })
})
