/**
 * Issue 22 finding 4, the console part: a customer's "I keep getting 429" can be looked up in the
 * operator console. In Chromium against the real gateway: a key refused with 429s and 403s shows
 * its refusal count and statuses on the keys page, and the refusals panel names each code with its
 * count — for all keys, for the one key clicked, and under an account filter; a key never refused
 * shows 0 (the column is there when a key shown was refused). The keys table still fits 1280 px.
 * With SWITCHYARD_SCREENSHOTS=1 the page is written to docs/console/keys-refusals.png.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { sharedChromium } from '../../support/browser.ts'
import { PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach, beforeEach } from '../../support/hooks.ts'

const TOKEN = 'console-refusals-admin-token-0123456789-abc'
const SHOTS = join(import.meta.dir, '../../../docs/console')
const WRITE_SHOTS = process.env.SWITCHYARD_SCREENSHOTS === '1'
const SKIP = 'console refusals browser test (test/e2e/console/console-refusals.test.ts)'
const chromium = sharedChromium(SKIP)

let gw: TestGateway
let browser: any

beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      admin: { token: TOKEN },
      usage: { flush_ms: 20 },
      plans: { ...PLANS, tiny: { rpm: 1, rpd: null, models: ['tier:free'] } },
    }),
  })
})

beforeEach(async () => {
  browser = await chromium.context()
})

afterEach(async () => {
  await browser?.close()
})

afterAll(async () => {
  await gw?.stop()
})

const chat = (key: string, model: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  }).then(async (r) => {
    await r.arrayBuffer()
    return r.status
  })

/** The panel's rows as [key, account, status, code, count]. */
const panelRows = (page: any) =>
  page
    .locator('[data-testid="refusals"] tbody tr')
    .evaluateAll((trs: any[]) =>
      trs.map((tr) => [...tr.children].slice(0, 5).map((td: any) => td.textContent.trim())),
    )

test('keys page: a key refused with 429s and 403s shows them with their codes; a clean key shows 0', async () => {
  if (!browser) return
  const refused = await gw.key('moe', 'tiny')
  const clean = await gw.key('moe', 'tiny')
  const other = await gw.key('zed', 'tiny')
  const statuses = [
    await chat(refused.key, 'demo/echo'), // admitted: not a refusal
    await chat(refused.key, 'demo/echo'), // 429 rate_limit_exceeded (1 a minute)
    await chat(refused.key, 'demo/echo'),
    await chat(refused.key, 'demo/echo'),
    await chat(refused.key, 'demo/echo-pro'), // 403 model_not_in_plan
    await chat(refused.key, 'demo/echo-pro'),
    await chat(other.key, 'demo/echo-pro'), // another account's refusal
  ]
  expect(statuses).toEqual([200, 429, 429, 429, 403, 403, 403])
  await gw.deps.recorder.flush()

  const page = await browser.newPage()
  await page.goto(`${gw.url}/console`)
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Overview' }).waitFor()
  await page.getByRole('link', { name: 'Keys' }).click()

  // The keys table: the refused key's count and statuses, its codes in the title; the clean key 0.
  const cell = page.locator(`tr[data-key="${refused.id}"] [data-testid="refused-count"]`)
  await cell.waitFor()
  expect((await cell.textContent()).replace(/\s+/g, ' ').trim()).toBe('5 · 429 403')
  const title = await cell.getAttribute('title')
  expect(title).toContain('429 rate_limit_exceeded ×3')
  expect(title).toContain('403 model_not_in_plan ×2')
  expect(await page.locator(`tr[data-key="${clean.id}"] [data-testid="refused-count"]`).count()).toBe(0)
  const cleanCells = await page.locator(`tr[data-key="${clean.id}"] td`).allInnerTexts()
  expect(cleanCells[7]).toBe('0')
  expect(await page.locator('table').first().locator('th').nth(7).textContent()).toBe('refused')

  // The panel, every key shown: each key and code with its count, biggest first.
  expect(await panelRows(page)).toEqual([
    [refused.id, 'moe', '429', 'rate_limit_exceeded', '3'],
    [refused.id, 'moe', '403', 'model_not_in_plan', '2'],
    [other.id, 'zed', '403', 'model_not_in_plan', '1'],
  ])

  // A click on the count shows that key's alone.
  await cell.click()
  await page.locator('[data-testid="refusals"] tbody tr').nth(2).waitFor({ state: 'detached' })
  expect(await panelRows(page)).toEqual([
    [refused.id, 'moe', '429', 'rate_limit_exceeded', '3'],
    [refused.id, 'moe', '403', 'model_not_in_plan', '2'],
  ])
  expect(await page.locator('[data-testid="refusals"] select').inputValue()).toBe(refused.id)

  // Nothing scrolls sideways at 1280 px with the new column.
  const wrap = await page
    .locator('.table-wrap')
    .first()
    .evaluate((el: any) => ({ scroll: el.scrollWidth, client: el.clientWidth }))
  expect(wrap.scroll).toBeLessThanOrEqual(wrap.client)
  if (WRITE_SHOTS) await page.screenshot({ path: join(SHOTS, 'keys-refusals.png'), fullPage: true })

  // One account's keys: only its refusals.
  await page.getByRole('form', { name: 'Key filter' }).locator('select').selectOption('zed')
  await page.locator(`tr[data-key="${refused.id}"]`).waitFor({ state: 'detached' })
  expect(await panelRows(page)).toEqual([[other.id, 'zed', '403', 'model_not_in_plan', '1']])

  // Account moe: its keys' refusals only.
  await page.getByRole('form', { name: 'Key filter' }).locator('select').selectOption('moe')
  await page.locator(`tr[data-key="${clean.id}"]`).waitFor()
  expect(await panelRows(page)).toEqual([
    [refused.id, 'moe', '429', 'rate_limit_exceeded', '3'],
    [refused.id, 'moe', '403', 'model_not_in_plan', '2'],
  ])
  await page.close()
}, 60_000)
