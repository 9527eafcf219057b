/**
 * The console shows every account and key, however many pages `GET /admin/v1/accounts` and
 * `GET /admin/v1/keys` take (200 rows a page at most, admin-list-pages.test.ts): its pages follow
 * `next_cursor`. Without that, the 201st account and its keys would be missing from the tables.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sharedChromium } from '../../support/browser.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach, beforeEach } from '../../support/hooks.ts'

const chromium = sharedChromium('console list pages (console-list-pages-browser.test.ts)')

const TOKEN = 'console-pages-admin-token-0123456789abcdef'
let gw: TestGateway
let browser: any

beforeAll(async () => {
  gw = await startGateway({ doc: testConfigDoc({ admin: { token: TOKEN } }) })
  for (let i = 0; i < 201; i++) await gw.deps.accounts.createAccount(`n${String(i).padStart(3, '0')}`)
  for (let i = 0; i < 201; i++) await gw.deps.accounts.createKey('n200', `k${i}`)
}, 60_000)
beforeEach(async () => {
  browser = await chromium.context()
})
afterEach(async () => {
  await browser?.close()
})
afterAll(async () => {
  await gw?.stop()
})

test('the accounts and keys tables hold the rows past the first page', async () => {
  if (!browser) return
  const page = await browser.newPage()
  await page.goto(`${gw.url}/console`)
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('link', { name: 'Accounts' }).click()
  await page.locator('tr[data-account="n200"]').waitFor()
  expect(await page.locator('tr[data-account]').count()).toBe(201)
  await page.getByRole('link', { name: 'Keys' }).click()
  await page.locator('tr[data-key]').nth(200).waitFor()
  expect(await page.locator('tr[data-key]').count()).toBe(201)
}, 60_000)
