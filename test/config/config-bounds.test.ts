/**
 * Audit findings 5 and 6: every duration has a maximum. A timer past 2^31−1 ms fires after 1 ms in
 * Bun (TimeoutOverflowWarning), so `first_byte_ms: 3000000000` timed out every request at once;
 * `limits.suspension.duration_s: 10000000000000` passed and later made `/v1/usage` answer 500
 * (RangeError: Invalid Date). Each is now refused with its path and its maximum.
 */
import { describe, expect, test } from 'bun:test'
import { MAX_DAYS, MAX_TIMER_MS, parseConfig } from '../../src/config/index.ts'
import { testConfigDoc } from '../support/config-doc.ts'
import { problems } from './problems.ts'

const MAX_TIMER_S = Math.floor(MAX_TIMER_MS / 1000)
/** Spans only added to times (rests, suspensions, a reservation's life): a century of seconds. */
const MAX_SPAN_S = MAX_DAYS * 86_400

/** Every duration setting: [path, maximum]. */
const DURATIONS: Array<[string, number]> = [
  ['/providers/0/timeouts/first_byte_ms', MAX_TIMER_MS],
  ['/providers/0/timeouts/first_token_ms', MAX_TIMER_MS],
  ['/providers/0/timeouts/idle_ms', MAX_TIMER_MS],
  ['/providers/0/timeouts/total_ms', MAX_TIMER_MS],
  ['/providers/0/retry/backoff_ms', MAX_TIMER_MS],
  ['/providers/0/retry/max_backoff_ms', MAX_TIMER_MS],
  ['/providers/0/retry/max_retry_after_s', MAX_TIMER_S],
  ['/providers/0/circuit/cooldown_s', MAX_SPAN_S],
  ['/server/stream_keepalive_ms', MAX_TIMER_MS],
  ['/server/stream_hold_ms', MAX_TIMER_MS],
  ['/database/busy_timeout_ms', MAX_TIMER_MS],
  ['/usage/flush_ms', MAX_TIMER_MS],
  ['/usage/retention_days', MAX_DAYS],
  ['/usage/hourly_retention_days', MAX_DAYS],
  ['/usage/daily_retention_days', MAX_DAYS],
  ['/limits/minute_window_ms', MAX_TIMER_MS],
  ['/limits/day_window_ms', MAX_TIMER_MS],
  ['/limits/reservation_ttl_s', MAX_SPAN_S],
  ['/limits/suspension/window_s', MAX_SPAN_S],
  ['/limits/suspension/duration_s', MAX_SPAN_S],
  ['/plans/basic/days', MAX_DAYS],
]

function docWith(value: (max: number) => number): Record<string, unknown> {
  const doc = testConfigDoc({ database: {}, usage: {}, limits: { suspension: {} } }) as any
  for (const [path, max] of DURATIONS) {
    const steps = path.split('/').slice(1)
    const last = steps.pop()!
    let node = doc
    for (const s of steps) node = node[s] ??= {}
    node[last] = value(max)
  }
  return doc
}

describe('durations are bounded', () => {
  test('one past its maximum, each duration is an error naming its path and the maximum', () => {
    const found = problems(() => parseConfig(docWith((max) => max + 1)))
    expect(found.map((p) => p.path).sort()).toEqual(DURATIONS.map(([path]) => path).sort())
    for (const [path, max] of DURATIONS) {
      expect(found.find((p) => p.path === path)!.message).toContain(String(max))
    }
    expect(found.find((p) => p.path === '/usage/flush_ms')!.message).toContain('longest timer')
  })

  test('the audit value: a suspension of 10000000000000 s is refused', () => {
    const doc = testConfigDoc({
      limits: { suspension: { max_rejections: 1, duration_s: 10_000_000_000_000 } },
    })
    expect(problems(() => parseConfig(doc))).toEqual([
      { path: '/limits/suspension/duration_s', message: expect.stringContaining(String(MAX_SPAN_S)) },
    ])
  })

  test('a suspension of 30 days is a valid setting (a span, not a timer: it was refused past 24.8 days)', () => {
    const doc = testConfigDoc({ limits: { suspension: { duration_s: 2_592_000, window_s: 2_592_000 } } })
    expect(parseConfig(doc).suspension.durationMs).toBe(2_592_000_000)
  })

  test('at their maxima the settings load, and every date they lead to is a valid date', () => {
    const c = parseConfig(docWith((max) => max))
    const now = Date.now()
    for (const ms of [
      c.suspension.durationMs,
      c.suspension.windowMs,
      c.limiter.reservationTtlMs,
      c.usage.retentionDays * 86_400_000,
      c.usage.dailyRetentionDays * 86_400_000,
      c.plans.basic!.days! * 86_400_000,
    ]) {
      expect(new Date(now + ms).toISOString()).toMatch(/^\d{4}-/)
      expect(new Date(now - ms).toISOString()).toMatch(/^\d{4}-/)
    }
    for (const ms of [c.usage.flushMs, c.server.streamKeepaliveMs]) {
      expect(ms).toBeLessThanOrEqual(MAX_TIMER_MS)
    }
  })
})
