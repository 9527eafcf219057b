/**
 * A plan renewed past any date (issue 31): the admin API refuses the renewal that would end the
 * plan after year 9999 (400 naming `days`), and an end stored past it by an older gateway is shown
 * as the latest time on every view — the admin API, `/v1/usage` — never a 500.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { LATEST_TIME } from '../../../src/util/clock.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

const admin = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`${gw.url}/admin/v1${path}`, {
    method,
    headers: { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: r.status, body: (await r.json()) as any }
}

test('a renewal past the end of year 9999 → 400 naming days; the end is unchanged', async () => {
  expect((await admin('POST', '/accounts', { name: 'b1', plan: 'pro', days: 30 })).status).toBe(200)
  const id = (await gw.deps.store.getAccount('b1'))!.id
  const near = LATEST_TIME - 10 * 86_400_000
  await gw.deps.store.setAccountPlan(id, {
    plan: 'pro',
    startedAt: Date.now(),
    expiresAt: near,
    reason: 'renewed',
    createdAt: Date.now(),
  })
  const r = await admin('POST', '/accounts/b1/plan', { plan: 'pro', days: 36500 })
  expect(r.status).toBe(400)
  expect(r.body.error).toMatchObject({ code: 'invalid_value', param: 'days' })
  expect(r.body.error.message).toContain('9999-12-31T23:59:59.999Z')
  expect((await gw.deps.store.getAccount('b1'))!.planExpiresAt).toBe(near)
  expect((await admin('POST', '/accounts/b1/plan', { plan: 'pro', days: 10 })).status).toBe(200)
})

test('an end stored past any Date: the account views and /v1/usage answer 200 with the latest time', async () => {
  const { key } = await gw.key('b2', 'pro', 30)
  const id = (await gw.deps.store.getAccount('b2'))!.id
  // What ~2,800 renewals by 36,500 days left in a database before the bound.
  await gw.deps.store.setAccountPlan(id, {
    plan: 'pro',
    startedAt: Date.now(),
    expiresAt: 9e15,
    reason: 'renewed',
    createdAt: Date.now(),
  })
  const list = await admin('GET', '/accounts')
  expect(list.status).toBe(200)
  expect(list.body.data.find((a: any) => a.name === 'b2').plan_expires_at).toBe('9999-12-31T23:59:59.999Z')
  const one = await admin('GET', '/accounts/b2')
  expect(one.status).toBe(200)
  expect(one.body.plan_history.at(-1).expires_at).toBe('9999-12-31T23:59:59.999Z')
  const usage = await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })
  expect(usage.status).toBe(200)
  expect(((await usage.json()) as any).subscription_details.expires_at).toBe('9999-12-31T23:59:59.999Z')
  expect((await admin('GET', '/accounts/b2/usage')).status).toBe(200)
})
