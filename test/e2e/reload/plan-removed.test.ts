/**
 * A plan taken out of the config by a live reload (DESIGN §5, §13), on a real server with a manual
 * clock: its accounts get 403 `plan_not_configured` before and after their end, and nothing is
 * written to the store — no downgrade to the default plan, no history row. When the plan comes
 * back, its own expiry policy applies: `disable` answers `plan_expired`, a `downgrade` moves the
 * account to the plan it names. Found by an audit: a missing plan's policy read as "downgrade to
 * the default plan", so an account an expired `disable` plan had shut out was served on `free`
 * after the reload, with a history row saying so, and putting the plan back did not undo it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { buildDeps } from '../../../src/app/build.ts'
import { type Running, startServer } from '../../../src/app/serve.ts'
import { loadConfigFile } from '../../../src/config/index.ts'
import { DAY_MS, ManualClock } from '../../../src/util/clock.ts'
import { createLogger } from '../../../src/util/log.ts'
import { ADMIN_TOKEN, PLANS, tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { writeConfig } from '../../support/process.ts'

const T0 = Date.parse('2026-03-01T00:00:00Z')
const clock = new ManualClock(T0)
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
/** `gold` disables at its end; `silver` downgrades to `pro`. */
const PAID = {
  gold: { rpm: null, rpd: null, models: ['*'], days: 1, on_expiry: 'disable' },
  silver: { rpm: null, rpd: null, models: ['*'], days: 2, on_expiry: { downgrade: 'pro' } },
}
let running: Running
let dir: string
let bo: string
let cy: string

const writePlans = (plans: Record<string, unknown>) =>
  writeConfig(dir, testConfigDoc({ plans: { ...PLANS, ...plans } }))
const reload = async () => {
  const r = await fetch(`${running.url}/admin/v1/reload`, { method: 'POST', headers: admin })
  expect(r.status).toBe(200)
  expect(((await r.json()) as { outcome: string }).outcome).toBe('applied')
}
/** The status and error code a chat request with `key` gets. */
const chat = async (key: string) => {
  const r = await fetch(`${running.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
  })
  const body = (await r.json()) as { error?: { code: string } }
  return `${r.status} ${body.error?.code ?? ''}`.trim()
}
/** The account as the admin API shows it (what `accounts show` prints). */
const account = async (name: string) => {
  const r = await fetch(`${running.url}/admin/v1/accounts/${name}`, { headers: admin })
  const a = (await r.json()) as { plan: string; plan_status: string; plan_history: { reason: string }[] }
  return { plan: a.plan, status: a.plan_status, history: a.plan_history.map((h) => h.reason) }
}

beforeAll(async () => {
  dir = tempDir()
  const config = await loadConfigFile(writePlans(PAID))
  running = startServer(config, buildDeps(config, { clock, log: createLogger('warn', () => {}) }))
  await running.deps.accounts.createAccount('bo', 'gold')
  await running.deps.accounts.createAccount('cy', 'silver')
  bo = (await running.deps.accounts.createKey('bo', 'k')).key
  cy = (await running.deps.accounts.createKey('cy', 'k')).key
})
afterAll(async () => {
  await running.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('a plan removed by a reload: 403 plan_not_configured before and after its end, nothing written; back, its own policy applies', async () => {
  clock.set(T0 + DAY_MS)
  expect(await chat(bo)).toBe('403 plan_expired')
  const boBefore = await account('bo')
  const cyBefore = await account('cy')
  expect(boBefore).toMatchObject({ plan: 'gold', status: 'expired' })
  expect(cyBefore).toMatchObject({ plan: 'silver', status: 'active' })

  writePlans({})
  await reload()
  // bo: gold had ended under `disable`; cy: silver has not ended yet.
  expect(await chat(bo)).toBe('403 plan_not_configured')
  expect(await chat(cy)).toBe('403 plan_not_configured')
  // Past silver's end too: still refused, and no downgrade is written for either.
  clock.set(T0 + 3 * DAY_MS)
  expect(await chat(bo)).toBe('403 plan_not_configured')
  expect(await chat(cy)).toBe('403 plan_not_configured')
  expect(await account('bo')).toEqual(boBefore)
  expect(await account('cy')).toEqual({ ...cyBefore, status: 'expired' })
  const usage = await fetch(`${running.url}/v1/usage`, { headers: { authorization: `Bearer ${cy}` } })
  const u = (await usage.json()) as Record<string, any>
  expect(u.account_information).toMatchObject({ plan: 'silver', disabled_reason: 'plan_not_configured' })
  expect(u.subscription_details).toMatchObject({ plan: 'silver', status: 'expired', on_expiry: null })

  writePlans(PAID)
  await reload()
  expect(await chat(bo)).toBe('403 plan_expired')
  expect(await account('bo')).toEqual(boBefore)
  // silver downgrades to pro, as it says: not to the default plan.
  expect(await chat(cy)).toBe('200')
  expect(await account('cy')).toEqual({
    plan: 'pro',
    status: 'active',
    history: [...cyBefore.history, 'expired: silver downgraded to pro'],
  })
})
