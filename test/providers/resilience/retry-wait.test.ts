/** Waits before a retry: the upstream's retry-after / retry-after-ms, else a jittered backoff, both bounded. */
import { describe, expect, test } from 'bun:test'
import {
  backoffMs,
  DEFAULT_RETRY,
  type RetryPolicy,
  retryAfterMs,
  waitsFor,
} from '../../../src/providers/resilience/retry-wait.ts'

const h = (o: Record<string, string>) => new Headers(o)
const NOW = Date.parse('2026-03-01T12:00:00Z')

describe('retryAfterMs', () => {
  test('seconds, fractions, milliseconds, HTTP dates', () => {
    expect(retryAfterMs(h({ 'retry-after': '7' }), NOW)).toBe(7000)
    expect(retryAfterMs(h({ 'retry-after': '0.5' }), NOW)).toBe(500)
    expect(retryAfterMs(h({ 'retry-after-ms': '1234.5' }), NOW)).toBe(1235)
    expect(retryAfterMs(h({ 'retry-after': new Date(NOW + 3000).toUTCString() }), NOW)).toBe(3000)
    expect(retryAfterMs(h({ 'retry-after': new Date(NOW - 3000).toUTCString() }), NOW)).toBe(0)
  })
  test('retry-after-ms wins over retry-after (OpenAI sends both)', () => {
    expect(retryAfterMs(h({ 'retry-after': '2', 'retry-after-ms': '1500' }), NOW)).toBe(1500)
  })
  test('absent or unreadable: null', () => {
    expect(retryAfterMs(h({}), NOW)).toBeNull()
    for (const v of ['soon', '-1', '', '1e3', '12abc', 'Sunday'])
      expect(retryAfterMs(h({ 'retry-after': v }), NOW)).toBeNull()
    expect(retryAfterMs(h({ 'retry-after-ms': 'x', 'retry-after': '3' }), NOW)).toBe(3000)
  })
})

describe('backoffMs', () => {
  const p: RetryPolicy = { attempts: 5, backoffMs: 250, maxBackoffMs: 4000, maxRetryAfterS: 10 }
  test('doubles per retry, keeps at least half of each step, never passes max_backoff_ms', () => {
    expect([0, 1, 2, 3, 4, 5, 40].map((n) => backoffMs(n, p, () => 0))).toEqual([
      125, 250, 500, 1000, 2000, 2000, 2000,
    ])
    expect([0, 1, 2, 3, 4, 5, 40].map((n) => backoffMs(n, p, () => 1))).toEqual([
      250, 500, 1000, 2000, 4000, 4000, 4000,
    ])
  })
  test('jitter spreads the waits', () => {
    const seen = new Set(Array.from({ length: 50 }, () => backoffMs(2, p)))
    expect(seen.size).toBeGreaterThan(10)
    for (const ms of seen) expect(ms >= 500 && ms <= 1000).toBe(true)
  })
})

describe('waitsFor', () => {
  test('a retry-after within max_retry_after_s is honoured as given; a longer one means fail over; none means backoff', () => {
    expect(waitsFor(2000, DEFAULT_RETRY)).toBe(true)
    expect(waitsFor(10_000, DEFAULT_RETRY)).toBe(true)
    expect(waitsFor(10_001, DEFAULT_RETRY)).toBe(false)
    expect(backoffMs(1, DEFAULT_RETRY, () => 0)).toBe(250)
  })
})
