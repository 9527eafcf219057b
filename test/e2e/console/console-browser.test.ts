/**
 * The console in a real browser (Debian's Chromium through playwright-core) against the real
 * gateway on port 0: sign in, create an account and a key (the secret shown once), real chat
 * requests with that key seen in the request log and in the usage chart's data, disable the key
 * (the next request is refused), sign out; a key holder sees only its own usage at /console/me.
 * With SWITCHYARD_SCREENSHOTS=1, screenshots of every page (the overview and keys page: console-operator-browser.test.ts) are written to docs/console/; without
 * it they are not, so a plain `bun test` leaves the committed images (and the work tree) alone.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { sharedChromium } from '../../support/browser.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { started } from '../../support/started.ts'

const TOKEN = 'console-admin-token-0123456789-abcdefghij'
const SHOTS = join(import.meta.dir, '../../../docs/console')
const WRITE_SHOTS = process.env.SWITCHYARD_SCREENSHOTS === '1'

let gw: TestGateway
const SKIP = 'console browser tests (test/e2e/console/console-browser.test.ts)'
const chromium = sharedChromium(SKIP)

beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      admin: { token: TOKEN },
      usage: { flush_ms: 20 },
      // The models page lists the operator's aliases with their targets (DESIGN §13).
      aliases: [
        {
          id: 'team/echo',
          to: [
            { model: 'demo/echo', weight: 3 },
            { model: 'demo/echo-pro', weight: 1 },
          ],
          listed: false,
        },
      ],
    }),
  })
  if (WRITE_SHOTS) mkdirSync(SHOTS, { recursive: true })
})

afterAll(async () => {
  await gw?.stop()
})

const chat = (key: string, content: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content }] }),
  })

const admin = (path: string) =>
  fetch(`${gw.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.text())

/** The cells of a chart's data table: header labels and rows of [time, ...values]. */
async function chartData(page: any, id: string) {
  const fig = page.locator(`figure#${id}`)
  await fig.locator('summary').click()
  const head = await fig.locator('table.chart-data thead th').allInnerTexts()
  const rows = await fig
    .locator('table.chart-data tbody tr')
    .evaluateAll((trs: any[]) => trs.map((tr) => [...tr.children].map((c: any) => c.textContent)))
  await fig.locator('summary').click() // closed again, so screenshots show the chart
  return { head, rows }
}

const shot = async (page: any, name: string) => {
  if (WRITE_SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}

test('operator: sign in, account, key shown once, requests in the log and the chart, disable, sign out', async () => {
  // The file's tab (support/browser.ts), the key holder's test's after this one.
  const page = await chromium.tab()
  if (!page) return
  const seen: Array<{ url: string; body: string }> = []
  const record = async (res: any) => {
    const body = await res.text().catch(() => '')
    seen.push({ url: res.url(), body })
  }
  page.on('response', record)

  await page.goto(`${gw.url}/console`)
  await page.getByLabel('Admin token').fill('not-the-token-at-all-not-the-token-at-all')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('alert').filter({ hasText: 'Incorrect admin token' }).waitFor()
  await shot(page, 'sign-in')
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Overview' }).waitFor()

  // Create an account and a key for it.
  await page.getByRole('link', { name: 'Accounts' }).click()
  const create = page.getByRole('form', { name: 'Create an account' })
  await create.getByLabel('Name').fill('acme')
  await create.locator('select[name="plan"]').selectOption('pro')
  await create.getByRole('button', { name: 'Create account' }).click()
  await page.locator('tr[data-account="acme"]').waitFor()
  expect(await page.locator('tr[data-account="acme"]').textContent()).toContain('pro')

  await page.getByRole('link', { name: 'Keys' }).click()
  const keyForm = page.getByRole('form', { name: 'Create a key' })
  await keyForm.locator('select[name="account"]').selectOption('acme')
  await keyForm.getByLabel('Label (optional)').fill('browser')
  await keyForm.getByRole('button', { name: 'Create key' }).click()
  const secret = (await page.getByTestId('new-secret').textContent()).trim()
  expect(secret).toMatch(/^sk-sy-[0-9A-Za-z]{40}$/)
  await page.getByRole('button', { name: /I have stored it/ }).click()
  await page.getByTestId('new-secret').waitFor({ state: 'detached' })
  const keyId = await page.locator('tr[data-key]').first().getAttribute('data-key')

  // Real requests with that key.
  const ids: string[] = []
  for (const word of ['alpha', 'beta', 'gamma']) {
    const res = await chat(secret, `hello ${word}`)
    expect(res.status).toBe(200)
    expect(((await res.json()) as any).choices[0].message.content).toContain(word)
    ids.push(res.headers.get('x-request-id')!)
  }
  await Bun.sleep(150) // the outcome batch (usage.flush_ms = 20)
  // The request log at phone size, in a context of its own (signed in by its own form), beside
  // the rest of this visit rather than after it: each page mostly waits on the other's steps.
  const phoneVisit = started(async () => {
    const phoneContext = await chromium.context()
    try {
      const phone = await phoneContext.newPage()
      await phone.setViewportSize({ width: 390, height: 844 })
      // Opened on the request log: signed in there, not by way of the overview's charts. Its
      // link is still clicked: at phone width the navigation must reach it.
      await phone.goto(`${gw.url}/console#/requests`)
      await phone.getByLabel('Admin token').fill(TOKEN)
      await phone.getByRole('button', { name: 'Sign in' }).click()
      await phone.getByRole('link', { name: 'Request log' }).click()
      await phone.locator(`tr[data-request-id="${ids[0]}"]`).waitFor()
      await shot(phone, 'request-log-phone')
    } finally {
      await phoneContext.close()
    }
  })

  try {
    // The request log lists them; one opens to its details.
    await page.getByRole('link', { name: 'Request log' }).click()
    for (const id of ids) await page.locator(`tr[data-request-id="${id}"]`).waitFor()
    await page.locator(`tr[data-request-id="${ids[1]}"]`).click()
    const detail = await page.getByTestId('request-detail').textContent()
    expect(detail).toContain(ids[1])
    expect(detail).toContain('demo/echo')
    expect(detail).toContain('200')
    const filters = page.getByRole('form', { name: 'Request log filters' })
    await filters.getByLabel('Status (502, 5xx)').fill('5xx')
    await filters.getByRole('button', { name: 'Apply' }).click()
    await page.getByText('No requests match on this page.').waitFor()
    await filters.getByLabel('Status (502, 5xx)').fill('200')
    await filters.getByRole('button', { name: 'Apply' }).click()
    await page.locator(`tr[data-request-id="${ids[0]}"]`).waitFor()
    await page.locator(`tr[data-request-id="${ids[0]}"]`).click()
    await shot(page, 'request-log')

    // The usage chart's data: three requests of demo/echo in this hour.
    await page.getByRole('link', { name: 'Usage' }).click()
    await page
      .getByRole('form', { name: 'Usage filters' })
      .locator('select[name="account"]')
      .selectOption('acme')
    await page.locator('figure#usage-chart canvas').waitFor()
    const data = await chartData(page, 'usage-chart')
    expect(data.head).toEqual(['time', 'demo/echo'])
    expect(data.rows.length).toBe(24)
    expect(data.rows.map((r: string[]) => Number(r[1])).reduce((a: number, b: number) => a + b, 0)).toBe(3)
    expect(Number(data.rows[data.rows.length - 1]![1])).toBe(3)
    await shot(page, 'usage')

    await page.getByRole('link', { name: 'Models' }).click()
    await page.locator('[data-testid="models"]').getByRole('cell', { name: 'demo/echo-pro' }).waitFor()
    // The aliases: each with its targets by weight and whether /v1/models lists it.
    const alias = page.locator('[data-testid="aliases"] tr[data-alias="team/echo"]')
    expect(
      (await alias.locator('td').allInnerTexts()).map((t: string) => t.replace(/\s+/g, ' ').trim()),
    ).toEqual([
      'team/echo',
      'demo/echo × 3 demo/echo-pro × 1',
      'hidden',
      expect.stringContaining('unlimited'),
    ])
    await shot(page, 'models')
    await page.getByRole('link', { name: 'Plans' }).click()
    await page.getByRole('cell', { name: /^unlimited/ }).waitFor()
    await shot(page, 'plans')
    await page.getByRole('link', { name: 'Overview' }).click()
    await page.locator('figure#live-traffic canvas').waitFor()
    // Traffic while the live charts read: the pro plan's rpm 10 turns the last of these into 429s.
    const traffic: number[] = []
    for (let i = 0; i < 12; i++) traffic.push((await chat(secret, `burst ${i}`)).status)
    expect(traffic.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2)
    // The next live reading (every 2 s) has them. A live row, not an hour's from the store (at the
    // hour's start, data-t a multiple of 3600): the store's hours are read again only every 30 s.
    await page.waitForFunction(() =>
      [
        ...(globalThis as any).document.querySelectorAll('figure#live-traffic table.chart-data tbody tr'),
      ].some(
        (tr: any) => Number(tr.children[0].dataset.t) % 3600 !== 0 && Number(tr.children[2]?.textContent) > 0,
      ),
    )
    const live = await chartData(page, 'live-traffic')
    expect(live.rows.some((r: string[]) => Number(r[2]) > 0)).toBe(true) // a 429/s reading above zero
    await page.getByRole('link', { name: 'Accounts' }).click()
    await page.locator('tr[data-account="acme"]').getByRole('button', { name: 'History' }).click()
    await page.getByRole('heading', { name: 'Plan history of acme' }).waitFor()
    await shot(page, 'accounts')

    // Disable the key from the console: the next request is refused.
    await page.getByRole('link', { name: 'Keys' }).click()
    await page.locator(`tr[data-key="${keyId}"]`).getByRole('button', { name: 'Disable' }).click()
    await page.locator(`tr[data-key="${keyId}"]`).getByText('disabled').waitFor()
    const refused = await chat(secret, 'after disable')
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as any).error.code).toBe('key_disabled')

    // The secret appeared once (the creation answer) and nowhere since: not in the page, not in
    // any answer the page got, not in any admin API answer.
    expect(await page.content()).not.toContain(secret)
    expect(seen.filter((r) => r.body.includes(secret)).map((r) => new URL(r.url).pathname)).toEqual([
      '/admin/v1/keys',
    ])
    for (const path of [
      '/keys',
      `/keys/${keyId}`,
      '/accounts/acme',
      '/accounts/acme/usage',
      '/requests',
      '/usage/series?group_by=key',
    ]) {
      expect(await admin(path)).not.toContain(secret)
    }

    // Sign out: the cookie no longer opens the admin API.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('Admin token').waitFor()
    const after = await page.evaluate(() => fetch('/admin/v1/accounts').then((r) => r.status))
    expect(after).toBe(401)
    await phoneVisit
  } finally {
    page.off('response', record)
    // A failure above must not leave the phone visit running into the next test.
    await phoneVisit.catch(() => {})
  }
}, 120_000)

test('key holder: /console/me shows its own usage and no one else’s', async () => {
  const page = await chromium.tab()
  if (!page) return
  const mine = await gw.key('me-co', 'pro')
  const theirs = await gw.key('other-co', 'pro')
  const myIds: string[] = []
  for (const word of ['one', 'two']) myIds.push((await chat(mine.key, word)).headers.get('x-request-id')!)
  const theirId = (await chat(theirs.key, 'secret plans')).headers.get('x-request-id')!
  await Bun.sleep(150)

  await page.goto(`${gw.url}/console/me`)
  await page.getByLabel('API key').fill('sk-sy-0000000000000000000000000000000000000000')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('alert').filter({ hasText: 'Incorrect API key' }).waitFor()
  await page.getByLabel('API key').fill(mine.key)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: /me-co/ }).waitFor()
  expect(await page.getByTestId('me-today-requests').textContent()).toContain('2')
  for (const id of myIds) await page.locator(`tr[data-request-id="${id}"]`).waitFor()
  expect(await page.locator(`tr[data-request-id="${theirId}"]`).count()).toBe(0)
  const data = await chartData(page, 'me-hourly')
  expect(data.head).toEqual(['time', 'demo/echo'])
  expect(data.rows.map((r: string[]) => Number(r[1])).reduce((a: number, b: number) => a + b, 0)).toBe(2)
  const html = await page.content()
  expect(html).not.toContain('other-co')
  expect(html).not.toContain('acme')
  await shot(page, 'me')
  // The key holder's cookie opens nothing of the admin API.
  expect(await page.evaluate(() => fetch('/admin/v1/accounts').then((r) => r.status))).toBe(401)
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByLabel('API key').waitFor()
}, 60_000)
