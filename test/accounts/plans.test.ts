import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { currentPlan } from '../../src/accounts/plans.ts'
import { AccountService } from '../../src/accounts/service.ts'
import { parseConfig } from '../../src/config/index.ts'
import { openSqliteStore } from '../../src/store/index.ts'
import { DAY_MS, ManualClock } from '../../src/util/clock.ts'
import { PLANS, tempDir, testConfigDoc } from '../support/config-doc.ts'

const T0 = Date.parse('2026-03-01T00:00:00Z')

function setup() {
  const clock = new ManualClock(T0)
  const store = openSqliteStore({ path: join(tempDir(), 'db.sqlite'), now: T0 })
  const config = parseConfig(
    testConfigDoc({
      plans: { ...PLANS, trial: { rpm: 2, rpd: 10, models: ['*'], days: 7, on_expiry: 'disable' } },
    }),
  )
  return { clock, store, config, svc: new AccountService(store, config, clock) }
}

test("an account's plan is one the config defines: constructor, toString and __proto__ → 400 plan_not_found", async () => {
  // They were found on Object's prototype: the account was created and its requests answered 500.
  const { svc } = setup()
  await svc.createAccount('a', 'free')
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    await expect(svc.createAccount(`b-${name.replace(/_/g, '')}`, name)).rejects.toMatchObject({
      status: 400,
      code: 'plan_not_found',
    })
    await expect(svc.setPlan('a', name)).rejects.toMatchObject({ status: 400, code: 'plan_not_found' })
  }
})

describe('plan lifecycle', () => {
  test('remaining_days counts down from the end; null without an end', async () => {
    const { svc, clock } = setup()
    expect(await svc.createAccount('a', 'pro', 30)).toMatchObject({
      plan: 'pro',
      remaining_days: 30,
      plan_status: 'active',
    })
    clock.advance(DAY_MS * 10 + 1)
    expect((await svc.view(await svc.getAccount('a'))).remaining_days).toBe(20)
    expect((await svc.createAccount('b', 'free')).remaining_days).toBeNull()
  })

  test('downgrade at expiry is applied once and lands in the history', async () => {
    const { svc, clock, store, config } = setup()
    await svc.createAccount('a', 'pro', 2)
    clock.advance(2 * DAY_MS)
    const s = await currentPlan(store, config, await svc.getAccount('a'), clock.now())
    expect(s).toMatchObject({ name: 'free', status: 'active', remainingDays: null })
    const h = await svc.planHistory('a')
    expect(h.map((x) => x.plan)).toEqual(['pro', 'free'])
    expect(h[1]!.reason).toContain('expired')
  })

  test('disable at expiry: expired status, zero days; set-plan restores at once', async () => {
    const { svc, clock } = setup()
    await svc.createAccount('t', 'trial')
    clock.advance(7 * DAY_MS)
    expect(await svc.view(await svc.getAccount('t'))).toMatchObject({
      plan: 'trial',
      plan_status: 'expired',
      remaining_days: 0,
    })
    expect(await svc.setPlan('t', 'trial', 7)).toMatchObject({ plan_status: 'active', remaining_days: 7 })
  })

  test('renewing before the end extends from the end', async () => {
    const { svc, clock } = setup()
    await svc.createAccount('r', 'pro', 30)
    clock.advance(10 * DAY_MS)
    expect((await svc.setPlan('r', 'pro', 30)).remaining_days).toBe(50)
    expect((await svc.setPlan('r', 'basic')).remaining_days).toBe(30)
  })

  test('bad names, unknown plans and duplicates are refused with what to do', async () => {
    const { svc } = setup()
    await expect(svc.createAccount('x', 'gold')).rejects.toThrow(/configured plans: free, basic, pro/)
    await expect(svc.createAccount('bad name!')).rejects.toThrow(/must be/)
    await svc.createAccount('dup')
    await expect(svc.createAccount('dup')).rejects.toThrow(/already exists/)
    const k = await svc.createKey('dup')
    await svc.setKeyState(k.id, 'revoked')
    await expect(svc.setKeyState(k.id, 'enabled')).rejects.toThrow(/revoked for good/)
    await expect(svc.rotateKey(k.id)).rejects.toThrow(/revoked/)
  })
})
