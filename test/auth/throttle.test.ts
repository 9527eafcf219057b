import { describe, expect, test } from 'bun:test'
import { ADMIN_THROTTLE, AuthThrottle, clientKey } from '../../src/auth/throttle.ts'
import { ManualClock } from '../../src/util/clock.ts'

describe('AuthThrottle', () => {
  test('five failures lock an address out until a minute after the first; other addresses are untouched', () => {
    const clock = new ManualClock(0)
    const t = new AuthThrottle(clock)
    for (let i = 0; i < 4; i++) t.fail('10.0.0.1')
    expect(t.blockedForMs('10.0.0.1')).toBe(0)
    clock.advance(10_000)
    t.fail('10.0.0.1')
    expect(t.blockedForMs('10.0.0.1')).toBe(50_000)
    expect(t.blockedForMs('10.0.0.2')).toBe(0)
    clock.advance(49_999)
    expect(t.blockedForMs('10.0.0.1')).toBe(1)
    clock.advance(1)
    expect(t.blockedForMs('10.0.0.1')).toBe(0)
    t.fail('10.0.0.1') // a new window starts
    expect(t.blockedForMs('10.0.0.1')).toBe(0)
  })

  test('the map stays bounded whatever number of addresses fail', () => {
    const clock = new ManualClock(0)
    const t = new AuthThrottle(clock, { ...ADMIN_THROTTLE, maxClients: 1000 })
    for (let i = 0; i < 200_000; i++) {
      t.fail(`a${i}`)
      if (i % 97 === 0) clock.advance(1)
    }
    expect(t.size).toBeLessThanOrEqual(1000)
    // Expired windows go first: after a minute, one new failure empties the map of old ones.
    clock.advance(60_000)
    t.fail('fresh')
    expect(t.size).toBe(1)
  })

  test('the default policy is 5 failures a minute over at most 10,000 addresses', () => {
    expect(ADMIN_THROTTLE).toEqual({ maxFailures: 5, windowMs: 60_000, maxClients: 10_000 })
  })
})

describe('clientKey', () => {
  test('IPv4 as is, IPv4-mapped as IPv4, IPv6 by /64', () => {
    expect(clientKey('192.0.2.7')).toBe('192.0.2.7')
    expect(clientKey('::ffff:192.0.2.7')).toBe('192.0.2.7')
    expect(clientKey('2001:db8:0:1:aaaa::1')).toBe('2001:db8:0:1::/64')
    expect(clientKey('2001:0db8:0000:0001:ffff:ffff:ffff:ffff')).toBe('2001:db8:0:1::/64')
    expect(clientKey('2001:db8::')).toBe('2001:db8:0:0::/64')
    expect(clientKey('::1')).toBe('0:0:0:0::/64')
    expect(clientKey('unknown')).toBe('unknown')
  })
})
