/**
 * What the console's pages print: the plans page and `GET /admin/v1/plans` show the expiry
 * policy that applies (a plan with `days` and no `on_expiry` downgrades to the default plan, as
 * `/v1/usage` says), limits and money with thousands separators; /console/me for a key without
 * traffic says so instead of drawing empty frames.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sharedChromium } from '../../support/browser.ts'
import { PLANS } from '../../support/config-doc.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const TOKEN = 'console-admin-token-0123456789-abcdefghij'
const SKIP = 'console figures browser tests (test/e2e/console/console-figures-browser.test.ts)'
const chromium = sharedChromium(SKIP)

let gw: TestGateway
let key: string

beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      admin: { token: TOKEN },
      plans: {
        ...PLANS,
        // days and no on_expiry: downgrades to the default plan at its end.
        trial: {
          rpm: 1000,
          rpd: null,
          tpm: 1_000_000,
          budget: { usd: 12345.5, period: 'month' },
          models: ['*'],
          days: 14,
        },
      },
    }),
  })
  key = (await gw.key('trial-co', 'trial')).key
})

afterAll(async () => {
  await gw?.stop()
})

async function signIn(page: any) {
  await page.goto(`${gw.url}/console`)
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Overview' }).waitFor()
}

test('GET /admin/v1/plans: the expiry policy that applies, the default downgrade included', async () => {
  const r = await fetch(`${gw.url}/admin/v1/plans`, { headers: { authorization: `Bearer ${TOKEN}` } })
  const plans = Object.fromEntries(((await r.json()) as any).data.map((p: any) => [p.name, p]))
  expect(plans.trial.on_expiry).toEqual({ downgrade: 'free' })
  expect(plans.basic.on_expiry).toEqual({ downgrade: 'free' })
  // The default plan itself is disabled at its end (an account given days of it).
  expect(plans.free.on_expiry).toBe('disable')
  expect(plans.unlimited.on_expiry).toEqual({ downgrade: 'free' })
  // As /v1/usage says for an account on the plan.
  const usage = (await (
    await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as any
  expect(usage.subscription_details.on_expiry).toEqual(plans.trial.on_expiry)
})

test('plans page: the default downgrade, limits and budgets with thousands separators', async () => {
  const page = await chromium.tab()
  if (!page) return
  await signIn(page)
  await page.getByRole('link', { name: 'Plans' }).click()
  // The overview's rows name the account `trial-co`: a row found before the page changed is gone
  // by the time its cells are read ([] in one whole run, stop 66).
  await page.getByRole('heading', { name: 'Plans' }).waitFor()
  const trial = page.getByRole('row').filter({ hasText: /^trial/ })
  await trial.waitFor()
  const cells = await trial.locator('td').allInnerTexts()
  expect(cells).toEqual([
    'trial',
    '1,000',
    'no limit',
    '1,000,000',
    'no limit',
    '$12,345.50/month',
    '*',
    '14',
    'downgrade to free',
  ])
  const free = await page.getByRole('row').filter({ hasText: /^free/ }).locator('td').allInnerTexts()
  expect(free.at(-2)).toBe('no end')
  expect(free.at(-1)).toBe('disable')
}, 60_000)

test('/console/me for a key without traffic: no empty frames, the words instead', async () => {
  const me = await chromium.tab()
  if (!me) return
  const quiet = await gw.key('quiet-co', 'pro')
  await me.goto(`${gw.url}/console/me`)
  await me.getByLabel('API key').fill(quiet.key)
  await me.getByRole('button', { name: 'Sign in' }).click()
  await me.getByRole('heading', { name: /quiet-co/ }).waitFor()
  expect(await me.locator('canvas').count()).toBe(0)
  for (const id of ['me-hourly', 'me-daily'])
    expect(await me.getByTestId(id).textContent()).toContain('No requests in this span yet.')
  expect(await me.getByTestId('me-recent-empty').textContent()).toBe('No requests yet.')
  expect(await me.getByTestId('me-recent').count()).toBe(0)
}, 60_000)
