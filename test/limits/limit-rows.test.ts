import { describe, expect, test } from 'bun:test'
import { rateLimitHeaders } from '../../src/limits/headers.ts'
import { anthropicRowHeaders, rowHeaders } from '../../src/limits/row-headers.ts'
import {
  bindingState,
  type LimitRow,
  limitRows,
  periodBounds,
  type RowState,
  rowKey,
  rowState,
  usdToMicros,
} from '../../src/limits/rows.ts'
import { windowOf } from '../../src/limits/windows.ts'
import { anthropicLimitHeaders } from '../../src/surfaces/messages/rate-headers.ts'

const at = (s: string) => Date.parse(s)

describe('limitRows', () => {
  test('a plan of rpm and rpd is two request rows, nothing else', () => {
    expect(limitRows({ rpm: 5, rpd: 100 }, null)).toEqual([
      { resource: 'requests', window: 'minute', scope: 'account', capacity: 5 },
      { resource: 'requests', window: 'day', scope: 'account', capacity: 100 },
    ])
  })

  test('null and absent limits make no row', () => {
    expect(limitRows({ rpm: null, rpd: null, tpm: null, tpd: null, budget: null }, null)).toEqual([])
    expect(limitRows({}, {})).toEqual([])
  })

  test('tokens and a budget, in order requests → tokens → money, account before key', () => {
    const rows = limitRows(
      { rpm: 10, rpd: null, tpm: 20_000, tpd: 200_000, budget: { usd: 50, period: 'month' } },
      { rpm: 2, tpm: 5_000, budget: { usd: 0.25, period: 'day' } },
    )
    expect(rows.map(rowKey)).toEqual([
      'account:requests:minute',
      'key:requests:minute',
      'account:tokens:minute',
      'key:tokens:minute',
      'account:tokens:day',
      'account:microdollars:month',
      'key:microdollars:day',
    ])
    expect(rows.find((r) => rowKey(r) === 'account:microdollars:month')).toEqual({
      resource: 'microdollars',
      window: 'period',
      period: 'month',
      scope: 'account',
      capacity: 50_000_000,
    })
    expect(rows.find((r) => rowKey(r) === 'key:microdollars:day')!.capacity).toBe(250_000)
  })

  test('a key row that cannot bind (at or above the account’s for the same measure) is left out', () => {
    const rows = limitRows(
      { rpm: 10, tpm: 1_000, budget: { usd: 5, period: 'month' } },
      { rpm: 10, tpm: 5_000, tpd: 50_000, budget: { usd: 10, period: 'week' } },
    )
    expect(rows.map(rowKey)).toEqual([
      'account:requests:minute',
      'account:tokens:minute',
      'key:tokens:day',
      'account:microdollars:month',
      'key:microdollars:week',
    ])
  })

  test('a key limit where the account has none is kept', () => {
    expect(limitRows({ rpm: null }, { rpm: 3 }).map(rowKey)).toEqual(['key:requests:minute'])
  })

  test('usdToMicros is exact for decimal prices (no 99999 for 0.1)', () => {
    expect(usdToMicros(0.1)).toBe(100_000)
    expect(usdToMicros(0.01)).toBe(10_000)
    expect(usdToMicros(50)).toBe(50_000_000)
    expect(usdToMicros(0.000001)).toBe(1)
    expect(usdToMicros(1234.567891)).toBe(1_234_567_891)
  })
})

describe('periodBounds (UTC calendar)', () => {
  test('day', () => {
    expect(periodBounds('day', at('2026-02-14T23:59:59.999Z'))).toEqual({
      start: at('2026-02-14T00:00:00Z'),
      resetsAt: at('2026-02-15T00:00:00Z'),
    })
  })

  test('week starts on Monday; a Sunday belongs to the week begun six days before', () => {
    // 2026-02-15 is a Sunday, 2026-02-16 a Monday.
    expect(periodBounds('week', at('2026-02-15T12:00:00Z'))).toEqual({
      start: at('2026-02-09T00:00:00Z'),
      resetsAt: at('2026-02-16T00:00:00Z'),
    })
    expect(periodBounds('week', at('2026-02-16T00:00:00Z')).start).toBe(at('2026-02-16T00:00:00Z'))
  })

  test('a week across a month and a year boundary', () => {
    // 2025-12-31 is a Wednesday.
    expect(periodBounds('week', at('2025-12-31T10:00:00Z'))).toEqual({
      start: at('2025-12-29T00:00:00Z'),
      resetsAt: at('2026-01-05T00:00:00Z'),
    })
  })

  test('month, February of a leap year, December', () => {
    expect(periodBounds('month', at('2028-02-29T18:00:00Z'))).toEqual({
      start: at('2028-02-01T00:00:00Z'),
      resetsAt: at('2028-03-01T00:00:00Z'),
    })
    expect(periodBounds('month', at('2026-12-31T23:59:59Z'))).toEqual({
      start: at('2026-12-01T00:00:00Z'),
      resetsAt: at('2027-01-01T00:00:00Z'),
    })
  })

  test('the boundary instant belongs to the new period', () => {
    expect(periodBounds('month', at('2026-03-01T00:00:00Z')).start).toBe(at('2026-03-01T00:00:00Z'))
    expect(periodBounds('day', at('2026-03-01T00:00:00Z')).start).toBe(at('2026-03-01T00:00:00Z'))
  })
})

const row = (r: Partial<LimitRow> & Pick<LimitRow, 'resource' | 'window' | 'capacity'>): LimitRow => ({
  scope: 'account',
  ...r,
})

describe('headers from the rows', () => {
  const now = at('2026-02-14T10:00:00Z')

  test('the request headers are exactly today’s (rateLimitHeaders) for the same windows', () => {
    const cases: [number | null, number, number | null, number | null, number, number | null][] = [
      [5, 2, now - 20_000, 100, 40, now - 3_600_000],
      [5, 0, null, null, 0, null],
      [null, 3, now - 1_000, 100, 100, now - 10],
    ]
    for (const [rpm, usedM, firstM, rpd, usedD, firstD] of cases) {
      const minute = windowOf(rpm, usedM, firstM, 60_000)
      const day = windowOf(rpd, usedD, firstD, 86_400_000)
      const today = rateLimitHeaders({ minute, day }, undefined, now)
      const states: RowState[] = []
      if (rpm !== null)
        states.push(
          rowState(row({ resource: 'requests', window: 'minute', capacity: rpm }), usedM, firstM, 60_000),
        )
      if (rpd !== null)
        states.push(
          rowState(row({ resource: 'requests', window: 'day', capacity: rpd }), usedD, firstD, 86_400_000),
        )
      expect(rowHeaders(states, now)).toEqual(today)
      const anthropicToday: Record<string, string> = {}
      anthropicLimitHeaders({ minute, day }, undefined, now, anthropicToday)
      const anthropic: Record<string, string> = {}
      anthropicRowHeaders(states, now, anthropic)
      expect(anthropic).toEqual(anthropicToday)
    }
  })

  test('token rows give the -tokens and -tokens-day headers, and Anthropic’s tokens set', () => {
    const states = [
      rowState(row({ resource: 'tokens', window: 'minute', capacity: 3_000 }), 1_200, now - 45_000, 60_000),
      rowState(
        row({ resource: 'tokens', window: 'day', capacity: 200_000 }),
        50_000,
        now - 3_600_000,
        86_400_000,
      ),
    ]
    expect(rowHeaders(states, now)).toEqual({
      'x-ratelimit-limit-tokens': '3000',
      'x-ratelimit-remaining-tokens': '1800',
      'x-ratelimit-reset-tokens': '15s',
      'x-ratelimit-limit-tokens-day': '200000',
      'x-ratelimit-remaining-tokens-day': '150000',
      'x-ratelimit-reset-tokens-day': '23h0m0s',
    })
    const anthropic: Record<string, string> = {}
    anthropicRowHeaders(states, now, anthropic)
    expect(anthropic).toEqual({
      'anthropic-ratelimit-tokens-limit': '3000',
      'anthropic-ratelimit-tokens-remaining': '1800',
      'anthropic-ratelimit-tokens-reset': '2026-02-14T10:00:15.000Z',
    })
  })

  test('where the account and the key both limit a measure, the one with less left is shown', () => {
    const account = rowState(
      row({ resource: 'tokens', window: 'minute', capacity: 10_000 }),
      2_000,
      now - 1_000,
      60_000,
    )
    const key = rowState(
      row({ resource: 'tokens', window: 'minute', capacity: 3_000, scope: 'key' }),
      1_500,
      now - 30_000,
      60_000,
    )
    expect(bindingState([account, key], 'tokens', 'minute')).toBe(key)
    expect(rowHeaders([account, key], now)['x-ratelimit-remaining-tokens']).toBe('1500')
    expect(rowHeaders([account, key], now)['x-ratelimit-limit-tokens']).toBe('3000')
    const tie = rowState(
      row({ resource: 'tokens', window: 'minute', capacity: 9_500, scope: 'key' }),
      1_500,
      null,
      60_000,
    )
    expect(bindingState([account, tie], 'tokens', 'minute')).toBe(account)
  })

  test('tokensOnly leaves the request measures out (a key’s own rpm: the account’s windows say those)', () => {
    const states = [
      rowState(
        row({ resource: 'requests', window: 'minute', capacity: 5, scope: 'key' }),
        2,
        now - 1_000,
        60_000,
      ),
      rowState(row({ resource: 'tokens', window: 'minute', capacity: 3_000 }), 1_200, now - 45_000, 60_000),
    ]
    expect(rowHeaders(states, now, {}, true)).toEqual({
      'x-ratelimit-limit-tokens': '3000',
      'x-ratelimit-remaining-tokens': '1800',
      'x-ratelimit-reset-tokens': '15s',
    })
    expect(rowHeaders(states, now)['x-ratelimit-remaining-requests']).toBe('3')
  })

  test('money rows make no rate-limit header; a period row resets at the period’s end', () => {
    const { resetsAt } = periodBounds('month', now)
    const s = rowState(
      row({ resource: 'microdollars', window: 'period', period: 'month', capacity: 50_000_000 }),
      1,
      now,
      resetsAt,
    )
    expect(s.resetAt).toBe(at('2026-03-01T00:00:00Z'))
    expect(rowHeaders([s], now)).toEqual({})
  })

  test('remaining never goes below zero (a settlement over the estimate can overshoot used)', () => {
    const s = rowState(row({ resource: 'tokens', window: 'minute', capacity: 100 }), 130, now, 60_000)
    expect(s.remaining).toBe(0)
  })
})
