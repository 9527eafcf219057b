/**
 * The console's charts in UTC whatever the browser's time zone (Chromium forced to
 * America/New_York and to Asia/Kolkata, half an hour off any whole-hour zone): the usage page's
 * axis ticks, its data table and the key holder's hourly and daily charts name UTC hours and
 * days, as their titles say, and the hover legend reads as the table does.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sharedChromium } from '../../support/browser.ts'
import { PLANS } from '../../support/config-doc.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'

const TOKEN = 'console-admin-token-0123456789-abcdefghij'
const SKIP = 'console UTC browser tests (test/e2e/console/console-utc-browser.test.ts)'
const chromium = sharedChromium(SKIP)
/** Each zone with its offset as `Date#getTimezoneOffset` gives it in November (minutes behind UTC). */
const ZONES: Array<[string, number]> = [
  ['America/New_York', 300],
  ['Asia/Kolkata', -330],
]

let gw: TestGateway
let browser: any
let key: string

beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      admin: { token: TOKEN },
      usage: { flush_ms: 20 },
      plans: {
        ...PLANS,
        trial: { rpm: 1000, rpd: null, models: ['*'], days: 14 },
      },
    }),
  })
  key = (await gw.key('tz-co', 'trial')).key
  for (const word of ['one', 'two', 'three']) {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: word }] }),
    })
    expect(r.status).toBe(200)
  }
  await Bun.sleep(150) // the outcome batch (usage.flush_ms = 20)
})

afterEach(async () => {
  await browser?.close()
  browser = null
})

afterAll(async () => {
  await gw?.stop()
})

const iso = (t: number) => new Date(t * 1000).toISOString()
const utcMinute = (t: number) => iso(t).slice(0, 16).replace('T', ' ')
const utcDay = (t: number) => iso(t).slice(0, 10)

/** A chart's table rows as [data-t, label] and its axis ticks as [t, label]. */
async function chart(page: any, id: string) {
  const fig = page.locator(`figure#${id}`)
  await fig.locator('canvas').waitFor()
  const rows: Array<[number, string]> = await fig
    .locator('table.chart-data tbody th')
    .evaluateAll((ths: any[]) => ths.map((th) => [Number(th.dataset.t), th.textContent]))
  const ticks: Array<[number, string]> = JSON.parse((await fig.getAttribute('data-x-ticks')) ?? '[]')
  return { rows, ticks }
}

/**
 * Each tick named in UTC: `HH:MM` (`HH:MM:SS`), with `MM-DD` where the day changes, or `MM-DD`;
 * and, for the usage charts, on a whole UTC hour.
 */
function expectUtcTicks(ticks: Array<[number, string]>, wholeHours = true) {
  expect(ticks.length).toBeGreaterThan(2)
  for (const [t, label] of ticks) {
    if (wholeHours) expect({ t, whole: t % 3600 }).toEqual({ t, whole: 0 })
    const [first, second] = label.split('\n')
    if (first!.includes(':')) {
      expect({ t, label: first }).toEqual({ t, label: iso(t).slice(11, 11 + first!.length) })
      if (second !== undefined) expect({ t, date: second }).toEqual({ t, date: iso(t).slice(5, 10) })
    } else {
      expect({ t, label }).toEqual({ t, label: iso(t).slice(5, 10) })
    }
  }
}

async function signIn(page: any) {
  await page.goto(`${gw.url}/console`)
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Overview' }).waitFor()
}

for (const [zone, offset] of ZONES) {
  test(`${zone}: usage, overview and /console/me charts name UTC hours and days`, async () => {
    browser = await chromium.context({ timezoneId: zone })
    if (!browser) return
    const page = await browser.newPage()
    await signIn(page)
    // The zone took (Chromium may name Kolkata by its old name, Asia/Calcutta).
    expect(await page.evaluate(() => new Date('2026-11-27T00:00:00Z').getTimezoneOffset())).toBe(offset)

    // Usage by hour: the table's labels and the axis ticks are UTC; this hour holds the 3 requests.
    await page.getByRole('link', { name: 'Usage' }).click()
    const filters = page.getByRole('form', { name: 'Usage filters' })
    await filters.locator('select[name="account"]').selectOption('tz-co')
    const hourly = await chart(page, 'usage-chart')
    expect(hourly.rows.length).toBe(24)
    for (const [t, label] of hourly.rows) expect(label).toBe(utcMinute(t))
    expect(hourly.rows.at(-1)![0]).toBe(Math.floor(Date.now() / 3_600_000) * 3600)
    expectUtcTicks(hourly.ticks)

    // By day: whole UTC days.
    await filters.locator('select[name="bucket"]').selectOption('day')
    // The day answer is in (`globalThis`: the page's, and the test's type-check has no DOM).
    await page.waitForFunction(() =>
      /^\d{4}-\d\d-\d\d$/.test(
        (globalThis as any).document.querySelector('figure#usage-chart table.chart-data tbody th')
          ?.textContent ?? '',
      ),
    )
    const daily = await chart(page, 'usage-chart')
    for (const [t, label] of daily.rows) {
      expect(t % 86_400).toBe(0)
      expect(label).toBe(utcDay(t))
    }
    expect(daily.rows.at(-1)![1]).toBe(new Date().toISOString().slice(0, 10))
    expectUtcTicks(daily.ticks)

    // The overview's live chart: its hover legend names the time as its table does (UTC).
    await page.getByRole('link', { name: 'Overview' }).click()
    const live = page.locator('figure#live-traffic')
    await live.locator('canvas').waitFor()
    await page.waitForFunction(
      () =>
        (globalThis as any).document.querySelectorAll('figure#live-traffic table.chart-data tbody tr')
          .length >= 2,
      undefined,
      { timeout: 20_000 },
    )
    const labels: Array<[number, string]> = await live
      .locator('table.chart-data tbody th')
      .evaluateAll((ths: any[]) => ths.map((th) => [Number(th.dataset.t), th.textContent]))
    for (const [t, label] of labels) expect(label).toBe(iso(t).slice(0, 19).replace('T', ' '))
    // Below the spend and health tables (issue 43): brought on screen to be hovered.
    await live.locator('.u-over').scrollIntoViewIfNeeded()
    const over = await live.locator('.u-over').boundingBox()
    await page.mouse.move(over.x + over.width * 0.97, over.y + over.height / 2)
    const legend = (
      await live.locator('.u-legend .u-series').first().locator('.u-value').textContent()
    ).trim()
    const now = await live
      .locator('table.chart-data tbody th')
      .evaluateAll((ths: any[]) => ths.map((th) => th.textContent))
    expect(now).toContain(legend)
    expectUtcTicks((await chart(page, 'live-traffic')).ticks, false)

    // The key holder's page: hourly and daily tables and ticks in UTC. In the same tab: a page of
    // its own would start a renderer of its own (~1 CPU-s on this host) for the same context.
    const me = page
    await me.goto(`${gw.url}/console/me`)
    await me.getByLabel('API key').fill(key)
    await me.getByRole('button', { name: 'Sign in' }).click()
    await me.getByRole('heading', { name: /tz-co/ }).waitFor()
    const mh = await chart(me, 'me-hourly')
    for (const [t, label] of mh.rows) expect(label).toBe(utcMinute(t))
    expect(mh.rows.at(-1)![0]).toBe(Math.floor(Date.now() / 3_600_000) * 3600)
    expectUtcTicks(mh.ticks)
    const md = await chart(me, 'me-daily')
    for (const [t, label] of md.rows) expect(label).toBe(utcDay(t))
    expect(md.rows.at(-1)![1]).toBe(new Date().toISOString().slice(0, 10))
    expectUtcTicks(md.ticks)
    await me.close()
  }, 90_000)
}
