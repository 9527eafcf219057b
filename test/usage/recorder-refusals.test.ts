/**
 * Refusals and rate-limited requests are counted (GET /admin/v1/refusals, the console's 429s) even
 * when the flush that carried them found the store busy: only the outcomes used to be put back for
 * the next flush, so a busy write lock silently dropped every refusal and rate-limited count of
 * that flush — and the count of refusals still recorded while it ran is added to them, never lost.
 * Against a real SQLite file whose write lock another process holds.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { openSqliteStore } from '../../src/store/index.ts'
import { UsageRecorder } from '../../src/usage/recorder.ts'
import { createLogger } from '../../src/util/log.ts'
import { admission } from '../support/admissions.ts'
import { tempDir } from '../support/config-doc.ts'
import { holdWriteLock } from '../support/lock.ts'

const T0 = Date.parse('2026-03-11T10:00:00Z')
const HOUR = 3_600_000

async function setup() {
  const path = join(tempDir(), 'db.sqlite')
  // A write gives up after 200 ms; the lock below is held longer than that.
  const store = openSqliteStore({ path, now: T0, busyTimeoutMs: 200 })
  const { id: accountId } = await store.createAccount({
    name: 'acme',
    plan: 'free',
    planStartedAt: T0,
    planExpiresAt: null,
    now: T0,
  })
  const lines: string[] = []
  const recorder = new UsageRecorder(
    store,
    600_000,
    createLogger('error', (l) => lines.push(l)),
  )
  const refuse = (code: string, n: number) => {
    for (let i = 0; i < n; i++)
      recorder.recordRefusal({ accountId, keyId: 'key_1', code, status: 429, at: T0 + i })
  }
  const limit = (n: number) => {
    for (let i = 0; i < n; i++)
      recorder.recordRateLimited({
        accountId,
        keyId: 'key_1',
        model: 'demo/echo',
        surface: 'chat',
        at: T0 + i,
      })
  }
  const counted = async () => {
    const refusals = await store.refusals({ from: T0 - HOUR, to: T0 + HOUR, keyId: 'key_1' })
    const series = await store.usageSeries({
      bucket: 'hour',
      from: T0 - HOUR,
      to: T0 + HOUR,
      accountId,
      groupBy: 'none',
    })
    return {
      refusals: Object.fromEntries(refusals.map((r) => [r.code, r.count])),
      rateLimited: series.flatMap((s) => s.points).reduce((n, p) => n + p.rate_limited, 0),
    }
  }
  return { path, store, accountId, recorder, refuse, limit, counted, lines }
}

test('refusals and rate-limited counts of a flush whose outcomes found the store busy are written by the next flush', async () => {
  const { path, store, accountId, recorder, refuse, limit, counted, lines } = await setup()
  const r = await store.admit(admission(accountId, T0))
  if (!r.admitted) throw new Error('refused')
  recorder.record({
    gatewayId: r.gatewayId,
    requestId: 'r',
    surface: 'chat',
    stream: false,
    status: 200,
    promptTokens: 1,
    completionTokens: 1,
    latencyMs: 1,
    ttftMs: null,
    errorCode: null,
    counted: { accountId, keyId: 'key_1', model: 'demo/echo', at: r.loggedAt ?? T0 },
  })
  refuse('rate_limit_exceeded', 3)
  limit(3)
  const lock = await holdWriteLock(path, 800)
  const failing = recorder.flush()
  await Bun.sleep(20)
  // More of the same while the busy flush runs: their count adds to the ones put back.
  refuse('rate_limit_exceeded', 2)
  refuse('budget_exceeded', 1)
  limit(2)
  await failing
  expect(lines.join('\n')).toContain('usage flush failed')
  await lock.released
  await recorder.flush()
  expect(await counted()).toEqual({
    refusals: { rate_limit_exceeded: 5, budget_exceeded: 1 },
    rateLimited: 5,
  })
  const page = await store.requestLog({ limit: 10 })
  expect(page.rows.filter((x) => x.gatewayId === r.gatewayId && x.status === 200)).toHaveLength(1)
  store.close()
}, 20_000)

test('refusals alone (no outcome in the flush) that found the store busy are written by the next flush', async () => {
  const { path, store, recorder, refuse, limit, counted } = await setup()
  refuse('invalid_request_error', 4)
  limit(1)
  const lock = await holdWriteLock(path, 800)
  await recorder.flush()
  await lock.released
  await recorder.flush()
  expect(await counted()).toEqual({ refusals: { invalid_request_error: 4 }, rateLimited: 1 })
  store.close()
}, 20_000)
