/**
 * A plan's end stays within `LATEST_TIME` (the end of year 9999). Found by an audit (issue 31):
 * renewing adds to the current end, so ~2,800 renewals by 36,500 days ran past the largest
 * JavaScript Date, and every view of the account — the admin API, `/v1/usage`, the CLI, the
 * console — failed with "Invalid Date".
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { AccountService } from '../../src/accounts/service.ts'
import { parseConfig } from '../../src/config/index.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { DAY_MS, iso, LATEST_TIME, ManualClock } from '../../src/util/clock.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'

const T0 = Date.parse('2026-03-01T00:00:00Z')

function setup() {
  const clock = new ManualClock(T0)
  const store = openSqliteStore({ path: join(tempDir(), 'db.sqlite'), now: T0 })
  return { clock, store, svc: new AccountService(store, parseConfig(testConfigDoc()), clock) }
}

describe('plan end', () => {
  test('renewals stop at the end of year 9999: the one that would pass it is a 400 naming days', async () => {
    const { svc, store } = setup()
    await svc.createAccount('b1', 'pro', 30)
    let last = await svc.getAccount('b1')
    // 79 renewals by 100 years reach year 9999; the 80th would pass it.
    for (let i = 0; i < 79; i++) await svc.setPlan('b1', 'pro', 36500)
    last = await svc.getAccount('b1')
    expect(last.planExpiresAt!).toBeLessThanOrEqual(LATEST_TIME)
    const room = Math.floor((LATEST_TIME - last.planExpiresAt!) / DAY_MS)
    const refused = svc.setPlan('b1', 'pro', 36500)
    await expect(refused).rejects.toMatchObject({ status: 400, code: 'invalid_value', param: 'days' })
    await expect(refused).rejects.toThrow(`so ${room} more days at most`)
    // Nothing was written, and the room that is left can still be used.
    expect((await svc.getAccount('b1')).planExpiresAt).toBe(last.planExpiresAt)
    expect((await svc.setPlan('b1', 'pro', room)).plan_expires_at!.startsWith('9999-12-')).toBe(true)
    expect((await store.planHistory(last.id)).length).toBe(81)
  })

  test('an explicit end past year 9999 is refused naming expires_at; the last millisecond is kept', async () => {
    const { svc } = setup()
    await expect(svc.createAccount('c1', 'pro', undefined, LATEST_TIME + 1)).rejects.toMatchObject({
      status: 400,
      param: 'expires_at',
    })
    expect(await svc.getAccount('c1').catch((e) => e.code)).toBe('account_not_found')
    expect((await svc.createAccount('c1', 'pro', undefined, LATEST_TIME)).plan_expires_at).toBe(
      '9999-12-31T23:59:59.999Z',
    )
    await expect(svc.setPlan('c1', 'basic', undefined, 8.64e15 + 1)).rejects.toMatchObject({
      param: 'expires_at',
    })
  })

  // `--expires-at 2020-01-01` (a mistyped year) expired the new plan at once: the account was
  // downgraded, its downgrade "started" in 2020, before the account existed.
  test('an explicit end in the past is refused naming expires_at; a later one is kept', async () => {
    const { svc, clock } = setup()
    const past = svc.createAccount('p1', 'pro', undefined, T0 - 1)
    await expect(past).rejects.toMatchObject({ status: 400, code: 'invalid_value', param: 'expires_at' })
    await expect(past).rejects.toThrow('is in the past')
    expect(await svc.getAccount('p1').catch((e) => e.code)).toBe('account_not_found')
    await svc.createAccount('p1', 'pro', 30)
    clock.advance(1000)
    await expect(svc.setPlan('p1', 'basic', undefined, T0)).rejects.toMatchObject({ param: 'expires_at' })
    expect((await svc.getAccount('p1')).plan).toBe('pro')
    expect((await svc.setPlan('p1', 'basic', undefined, clock.now() + DAY_MS)).plan).toBe('basic')
  })

  test('an end already stored past any Date (an older database) is shown as the latest time, never a failure', async () => {
    const { svc, store, clock } = setup()
    const a = await store.createAccount({
      name: 'b2',
      plan: 'pro',
      planStartedAt: T0,
      planExpiresAt: T0,
      now: T0,
    })
    await store.setAccountPlan(a.id, {
      plan: 'pro',
      startedAt: T0,
      expiresAt: 9e15,
      reason: 'renewed',
      createdAt: clock.now(),
    })
    const views = await svc.listAccounts()
    expect(views[0]).toMatchObject({
      name: 'b2',
      plan_expires_at: '9999-12-31T23:59:59.999Z',
      plan_status: 'active',
    })
    expect((await svc.planHistory('b2')).at(-1)!.expires_at).toBe('9999-12-31T23:59:59.999Z')
    // Renewing it is refused (it is already past the latest end); changing the plan is not.
    await expect(svc.setPlan('b2', 'pro', 30)).rejects.toMatchObject({ param: 'days' })
    expect((await svc.setPlan('b2', 'basic')).plan).toBe('basic')
  })

  test('iso is total: past the latest time it reads as the latest time', () => {
    expect(iso(LATEST_TIME)).toBe('9999-12-31T23:59:59.999Z')
    expect(iso(8.64e15 + 1)).toBe('9999-12-31T23:59:59.999Z')
    expect(iso(Number.MAX_SAFE_INTEGER)).toBe('9999-12-31T23:59:59.999Z')
    expect(iso(null)).toBeNull()
    expect(iso(T0)).toBe('2026-03-01T00:00:00.000Z')
  })
})
