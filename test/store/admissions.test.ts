/**
 * The SQLite hot path writes only what limits and /v1/usage need: an admission adds a row to
 * the limiter's own log and bumps the usage counters; the request log row is written once,
 * complete, by the outcome batch. Retention trims the limiter's log to the day window.
 */
import { expect, test } from 'bun:test'
import type { AdmitInput, Completion } from '../../src/store/types.ts'
import { admission, storeWithAccount } from '../support/admissions.ts'

const T0 = Date.parse('2026-03-01T00:00:00Z')
const DAY = 86_400_000

async function setup() {
  const { store, accountId } = await storeWithAccount(T0)
  const input = (now: number, rpm: number | null = null, rpd: number | null = null): AdmitInput =>
    admission(accountId, now, { requestId: 'req_client', surface: 'messages', stream: true, rpm, rpd })
  const count = (table: string) =>
    store.db.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n
  return { store, accountId, input, count }
}

test('a lone admission that fails rejects its caller and leaves nothing behind; the next one is admitted', async () => {
  const { store, input, accountId, count } = await setup()
  const broken = { ...input(T0), accountId: null as unknown as number } // NOT NULL violation
  await expect(store.admit(broken)).rejects.toThrow(/NOT NULL/)
  expect(count('admissions')).toBe(0)
  expect(count('usage_minutes')).toBe(0)
  expect((await store.admit(input(T0 + 1))).admitted).toBe(true)
  expect((await store.windows(accountId, T0 + 2, 10, null)).minute.used).toBe(1)
  store.close()
})

test('admission writes no log row; the outcome writes it once, complete, and counts it once', async () => {
  const { store, input, accountId, count } = await setup()
  const inp = input(T0 + 5)
  const r = await store.admit(inp)
  if (!r.admitted) throw new Error('not admitted')
  expect(count('requests')).toBe(0)
  expect(count('admissions')).toBe(1)
  const day = T0 - (T0 % DAY)
  expect((await store.usageSummary(accountId, T0 + 10, day)).today.requests).toBe(1)
  const outcome: Completion = {
    gatewayId: r.gatewayId,
    requestId: inp.requestId,
    surface: 'messages',
    stream: true,
    status: 200,
    promptTokens: 11,
    completionTokens: 7,
    latencyMs: 40,
    ttftMs: 9,
    errorCode: null,
    counted: { accountId, keyId: 'key_1', model: 'demo/echo', at: r.loggedAt! },
  }
  await store.complete([outcome])
  const page = await store.requestLog({ limit: 10 })
  expect(page.rows).toHaveLength(1)
  expect(page.rows[0]).toMatchObject({
    gatewayId: r.gatewayId,
    requestId: 'req_client',
    accountId,
    accountName: 'acme',
    keyId: 'key_1',
    model: 'demo/echo',
    surface: 'messages',
    stream: true,
    createdAt: T0 + 5,
    status: 200,
    promptTokens: 11,
    completionTokens: 7,
    latencyMs: 40,
    ttftMs: 9,
    errorCode: null,
  })
  const u = await store.usageSummary(accountId, T0 + 10, day)
  expect(u.today).toMatchObject({ requests: 1, prompt_tokens: 11, completion_tokens: 7, errors: 0 })
  const series = await store.usageSeries({ bucket: 'hour', from: day, to: day + DAY, groupBy: 'none' })
  const total = series.flatMap((s) => s.points).reduce((n, p) => n + p.requests, 0)
  expect(total).toBe(1)
  store.close()
})

test('a limit lowered below the window’s use: retry when enough requests have left it', async () => {
  const { store, input } = await setup()
  for (let i = 0; i < 5; i++) expect((await store.admit(input(T0 + i * 1000, 5))).admitted).toBe(true)
  // rpm 3 with 5 in the window: admits again once 3 have left, i.e. when the third (T0 + 2 s) does.
  const r = await store.admit(input(T0 + 10_000, 3))
  expect(r).toMatchObject({ admitted: false, window: 'minute', retryAt: T0 + 2000 + 60_000 })
  const same = await store.admit(input(T0 + 10_000, 5))
  expect(same).toMatchObject({ admitted: false, window: 'minute', retryAt: T0 + 60_000 })
  store.close()
})

test('retention trims the limiter’s log to the day window, in chunks, and limits stay exact', async () => {
  const { store, input, accountId, count } = await setup()
  const other = await store.createAccount({
    name: 'other',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  // 30 a day ago and more, 4 within the last day, for two accounts.
  for (let i = 0; i < 30; i++) await store.admit(input(T0 + i))
  for (let i = 0; i < 30; i++) await store.admit({ ...input(T0 + i), accountId: other.id })
  const now = T0 + DAY + 1000
  for (let i = 0; i < 4; i++) await store.admit(input(now - 500 + i))
  const policy = {
    logBefore: 0,
    logMaxRows: 1_000_000,
    logKeepAfter: now - DAY,
    hourlyBefore: 0,
    dailyBefore: 0,
    chunk: 7,
  }
  let calls = 0
  for (let n = await store.pruneHistory(policy); n > 0; n = await store.pruneHistory(policy)) {
    expect(n).toBeLessThanOrEqual(7)
    calls++
  }
  expect(calls).toBeGreaterThanOrEqual(60 / 7)
  expect(count('admissions')).toBe(4)
  expect((await store.windows(accountId, now, null, 5)).day.used).toBe(4)
  expect((await store.admit(input(now + 1, null, 5))).admitted).toBe(true)
  expect((await store.admit(input(now + 2, null, 5))).admitted).toBe(false)
  // An account whose admissions all left starts counting again from one.
  expect((await store.windows(other.id, now, null, 5)).day.used).toBe(0)
  expect((await store.admit({ ...input(now + 3, null, 1), accountId: other.id })).admitted).toBe(true)
  expect((await store.admit({ ...input(now + 4, null, 1), accountId: other.id })).admitted).toBe(false)
  store.close()
})
