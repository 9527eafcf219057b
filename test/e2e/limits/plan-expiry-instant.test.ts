/**
 * A plan's end at the millisecond, on a real server with a manual clock: one ms before it the key
 * is served on its plan; at it, a `disable` plan answers 403 `plan_expired` naming the plan and
 * when it ended (found by an audit: the message said only "has expired"), and a `downgrade` plan
 * is served on the plan it names. `/v1/usage` and `/v1/models` agree at the same instant.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DAY_MS, ManualClock } from '../../../src/util/clock.ts'
import {
  ADMIN_TOKEN,
  bearer,
  PLANS,
  startGateway,
  type TestGateway,
  testConfigDoc,
} from '../../support/gateway.ts'

const T0 = Date.parse('2026-03-01T00:00:00Z')
const END = T0 + DAY_MS
const clock = new ManualClock(T0)
let gw: TestGateway
let trial: string
let pro: string

beforeAll(async () => {
  const doc = testConfigDoc({
    plans: { ...PLANS, trial: { rpm: 10, rpd: 10, models: ['*'], days: 1, on_expiry: 'disable' } },
  })
  gw = await startGateway({ clock, doc })
  trial = (await gw.key('t', 'trial')).key
  pro = (await gw.key('p', 'pro', 1)).key
})
afterAll(() => gw.stop())

const chat = (key: string, model: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  })
const get = async (path: string, key: string) => {
  const r = await fetch(`${gw.url}${path}`, { headers: bearer(key) })
  return { status: r.status, json: (await r.json()) as any }
}

describe('plan expiry at the exact instant', () => {
  test('1 ms before the end: served on the plan, one day left', async () => {
    clock.set(END - 1)
    expect((await chat(trial, 'demo/echo-pro')).status).toBe(200)
    expect((await chat(pro, 'demo/echo-pro')).status).toBe(200)
    const u = await get('/v1/usage', trial)
    expect(u.json.account_information).toMatchObject({ plan: 'trial', is_enabled: true })
    expect(u.json.subscription_details).toMatchObject({ status: 'active', remaining_days: 1 })
  })

  test('at the end, disable: 403 plan_expired naming the plan and when; usage says why; models refused', async () => {
    clock.set(END)
    const r = await chat(trial, 'demo/echo')
    expect(r.status).toBe(403)
    const err = ((await r.json()) as any).error
    expect(err.code).toBe('plan_expired')
    expect(err.message).toContain("'trial' plan of account 't'")
    expect(err.message).toContain('expired at 2026-03-02T00:00:00.000Z')
    const u = await get('/v1/usage', trial)
    expect(u.status).toBe(200)
    expect(u.json.account_information).toMatchObject({
      plan: 'trial',
      is_enabled: false,
      disabled_reason: 'plan_expired',
    })
    expect(u.json.subscription_details).toMatchObject({
      plan: 'trial',
      status: 'expired',
      expires_at: '2026-03-02T00:00:00.000Z',
      remaining_days: 0,
      on_expiry: 'disable',
    })
    const m = await get('/v1/models', trial)
    expect(m.status).toBe(403)
    expect(m.json.error.code).toBe('plan_expired')
  })

  test('at the end, downgrade: the named plan applies at once to chat, models and usage', async () => {
    clock.set(END)
    const r = await chat(pro, 'demo/echo-pro')
    expect(r.status).toBe(403)
    expect(((await r.json()) as any).error).toMatchObject({ code: 'model_not_in_plan', param: 'model' })
    expect((await chat(pro, 'demo/echo')).status).toBe(200)
    const m = await get('/v1/models', pro)
    expect(m.json.data.map((x: any) => x.id)).toEqual(['demo/echo'])
    const u = await get('/v1/usage', pro)
    expect(u.json.account_information).toMatchObject({ plan: 'free', is_enabled: true })
    expect(u.json.rate_limits).toMatchObject({ rpm: 5, rpd: 100 })
    expect(u.json.subscription_details).toMatchObject({
      plan: 'free',
      status: 'active',
      remaining_days: null,
    })
    expect(u.json.subscription_details.history.map((h: any) => h.plan)).toEqual(['pro', 'free'])
    expect(u.json.subscription_details.history[1].started_at).toBe('2026-03-02T00:00:00.000Z')
    // The admin API shows the same changes the same way (accounts/views.ts, planChangeView).
    const a = await get('/admin/v1/accounts/p', ADMIN_TOKEN)
    expect(a.json.plan_history).toEqual(u.json.subscription_details.history)
    expect(Object.keys(a.json.plan_history[1])).toEqual([
      'plan',
      'started_at',
      'expires_at',
      'reason',
      'changed_at',
    ])
  })
})
