/**
 * The operator's morning in the console, in Chromium against the real gateway (issue 22, finding
 * 6): each account's plan select shows its plan (one click on "Set plan" changes nothing); the
 * keys table fits 1280 px with its buttons on screen; usage bars stack (equal series both show,
 * the current hour whole) and can be split per key; the overview shows the stored last hours on
 * arrival, keeps its live figures across visits, keeps its time axis on the present (also on a
 * phone), and shows today's top keys and accounts and each provider's upstream errors. With
 * SWITCHYARD_SCREENSHOTS=1 the usage page split per key is written to docs/console/ (the overview
 * and the keys page: console-operator-browser.test.ts).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { sharedChromium } from '../../support/browser.ts'
import { DEMO_PROVIDER, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { beforeEach } from '../../support/hooks.ts'
import { started } from '../../support/started.ts'

const TOKEN = 'console-chores-admin-token-0123456789-abcdef'
const SHOTS = join(import.meta.dir, '../../../docs/console')
const WRITE_SHOTS = process.env.SWITCHYARD_SCREENSHOTS === '1'
const SKIP = 'console chores browser tests (test/e2e/console/console-chores.test.ts)'
const chromium = sharedChromium(SKIP)

let gw: TestGateway
let upstream: ReturnType<typeof Bun.serve>
/** The accounts, keys and usage tests' tab, one after another (sharedChromium's `tab`). */
let tab: any
/** The overview test's visit, under way from beforeAll on (overviewVisit). */
let overview: Promise<void>

beforeAll(async () => {
  // An upstream that is down for maintenance: every call answers 503.
  upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () =>
      Response.json({ error: { message: 'down for maintenance', type: 'server_error' } }, { status: 503 }),
  })
  gw = await startGateway({
    doc: testConfigDoc({
      admin: { token: TOKEN },
      usage: { flush_ms: 20 },
      providers: [
        DEMO_PROVIDER,
        {
          prefix: 'flaky',
          kind: 'openai',
          base_url: `http://127.0.0.1:${upstream.port}/v1`,
          api_key: 'sk-flaky-upstream-0123456789',
          models: [{ name: 'm1', context_window: 8192, max_output_tokens: 1024, features: ['streaming'] }],
        },
      ],
      plans: { ...PLANS, all: { rpm: null, rpd: null, models: ['*'] } },
    }),
  })
  overview = started(async () => {
    const context = await chromium.context()
    if (!context) return
    try {
      await overviewVisit(context)
    } finally {
      await context.close()
    }
  })
})

beforeEach(async () => {
  tab = await chromium.tab()
})

afterAll(async () => {
  await overview?.catch(() => {})
  await gw?.stop()
  upstream?.stop(true)
})

const chat = (key: string, model: string, content = 'hello') =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  })

const adminJson = (path: string) =>
  fetch(`${gw.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }).then(
    (r) => r.json() as any,
  )

/**
 * Signs in by the form, on the page a test is about (`#/accounts`): it opens there, not on the
 * overview, whose charts and live readings only the overview test is about. The tests still click
 * their page's link, as a user would.
 */
async function signIn(page: any, hash = 'overview', heading = 'Overview') {
  await page.goto(`${gw.url}/console#/${hash}`)
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: heading }).waitFor()
}

/** The cells of a chart's data table: header labels and rows of [time, ...values]. */
async function chartData(page: any, id: string) {
  const fig = page.locator(`figure#${id}`)
  await fig.locator('summary').click()
  const head = await fig.locator('table.chart-data thead th').allInnerTexts()
  const rows = await fig
    .locator('table.chart-data tbody tr')
    .evaluateAll((trs: any[]) => trs.map((tr) => [...tr.children].map((c: any) => c.textContent)))
  await fig.locator('summary').click()
  return { head, rows: rows as string[][] }
}

test('accounts: each row’s plan select shows the account’s plan; "Set plan" alone keeps it', async () => {
  if (!tab) return
  await gw.key('plan-pro', 'pro')
  await gw.key('plan-basic', 'basic')
  await gw.key('plan-free', 'free')
  const page = tab
  await signIn(page, 'accounts', 'Accounts')
  await page.getByRole('link', { name: 'Accounts' }).click()
  for (const [name, plan] of [
    ['plan-pro', 'pro'],
    ['plan-basic', 'basic'],
    ['plan-free', 'free'],
  ]) {
    const select = page.locator(`tr[data-account="${name}"] select[name="plan"]`)
    await select.waitFor()
    expect(await select.inputValue()).toBe(plan!)
  }
  const reloaded = page.waitForResponse((r: any) => r.url().endsWith('/admin/v1/accounts'))
  await page.locator('tr[data-account="plan-pro"]').getByRole('button', { name: 'Set plan' }).click()
  await reloaded
  expect((await adminJson('/accounts/plan-pro')).plan).toBe('pro')
  expect(await page.locator('tr[data-account="plan-pro"] select[name="plan"]').inputValue()).toBe('pro')
  // At 1280 px each row is one line, its buttons on screen.
  for (const h of await page
    .locator('tbody tr[data-account]')
    .evaluateAll((trs: any[]) => trs.map((tr) => tr.getBoundingClientRect().height)))
    expect(h).toBeLessThanOrEqual(56)
  for (const right of await page
    .locator('tbody tr[data-account] button')
    .evaluateAll((bs: any[]) => bs.map((b) => b.getBoundingClientRect().right)))
    expect(right).toBeLessThanOrEqual(1280)
}, 60_000)

test('keys at 1280 px: every action button on screen, rows one line tall', async () => {
  if (!tab) return
  const long = 'nightly batch summariser for the data team (eu-west)'
  await gw.deps.accounts.createAccount('keys-co', 'pro')
  const a = await gw.deps.accounts.createKey('keys-co', long)
  await gw.deps.accounts.createKey('keys-co', 'ci')
  await gw.deps.store.setKeySuspended(a.id, Date.now() + 3_600_000)
  expect((await chat((await gw.deps.accounts.createKey('keys-co', 'used')).key, 'demo/echo')).status).toBe(
    200,
  )
  const page = tab
  await signIn(page, 'keys', 'Keys')
  await page.getByRole('link', { name: 'Keys' }).click()
  await page.locator(`tr[data-key="${a.id}"]`).getByRole('button', { name: 'Unsuspend' }).waitFor()
  const width = page.viewportSize().width
  expect(width).toBe(1280)
  const rows = page.locator('tbody tr[data-key]')
  expect(await rows.count()).toBeGreaterThanOrEqual(3)
  for (const box of await rows.evaluateAll((trs: any[]) =>
    trs.map((tr) => tr.getBoundingClientRect().height),
  ))
    expect(box).toBeLessThanOrEqual(56)
  const buttons = page.locator('tbody tr[data-key] button')
  for (const r of await buttons.evaluateAll((bs: any[]) =>
    bs.map((b) => {
      const x = b.getBoundingClientRect()
      return { left: x.left, right: x.right }
    }),
  )) {
    expect(r.left).toBeGreaterThanOrEqual(0)
    expect(r.right).toBeLessThanOrEqual(width)
  }
  // Nothing scrolls sideways: every table (the keys, their limits and spend) fits its box.
  const wraps = await page
    .locator('.table-wrap')
    .evaluateAll((els: any[]) => els.map((el) => ({ scroll: el.scrollWidth, client: el.clientWidth })))
  expect(wraps.length).toBeGreaterThanOrEqual(2)
  for (const wrap of wraps) expect(wrap.scroll).toBeLessThanOrEqual(wrap.client)
  // The label is still there in full for whoever points at it.
  expect(await page.locator(`tr[data-key="${a.id}"] [title="${long}"]`).count()).toBe(1)
}, 60_000)

/**
 * The bars as drawn: for each pixel column of the plot, the runs (≥ 8 px tall) of one saturated
 * colour, top to bottom; grey grid lines and white background are not runs.
 */
async function barColumns(page: any, id: string) {
  return page.locator(`figure#${id}`).evaluate((fig: any) => {
    const canvas = fig.querySelector('canvas')
    const over = fig.querySelector('.u-over').getBoundingClientRect()
    const box = canvas.getBoundingClientRect()
    const scale = canvas.width / box.width
    const ctx = canvas.getContext('2d')
    const left = Math.round((over.left - box.left) * scale)
    const top = Math.round((over.top - box.top) * scale)
    const w = Math.round(over.width * scale)
    const h = Math.round(over.height * scale)
    const img = ctx.getImageData(left, top, w, h).data
    const cols: Array<Array<{ color: string; len: number }>> = []
    for (let x = 0; x < w; x++) {
      const runs: Array<{ color: string; len: number }> = []
      let prev = ''
      let len = 0
      for (let y = 0; y <= h; y++) {
        let color = ''
        if (y < h) {
          const i = (y * w + x) * 4
          const [r, g, b] = [img[i], img[i + 1], img[i + 2]]
          if (Math.max(r, g, b) - Math.min(r, g, b) > 40) color = `${r},${g},${b}`
        }
        if (color === prev) len++
        else {
          if (prev && len >= 8) runs.push({ color: prev, len })
          prev = color
          len = 1
        }
      }
      cols.push(runs)
    }
    return { width: w, cols }
  })
}

test('usage: equal series stack (both seen), the current hour is drawn whole, one line per key', async () => {
  if (!tab) return
  await gw.deps.accounts.createAccount('stack-co', 'all')
  const a = await gw.deps.accounts.createKey('stack-co', 'web app')
  const b = await gw.deps.accounts.createKey('stack-co', 'batch')
  for (let i = 0; i < 2; i++) {
    expect((await chat(a.key, 'demo/echo')).status).toBe(200)
    expect((await chat(b.key, 'demo/echo-pro')).status).toBe(200)
  }
  await Bun.sleep(150) // the outcome batch (usage.flush_ms = 20)
  const page = tab
  await signIn(page, 'usage', 'Usage')
  await page.getByRole('link', { name: 'Usage' }).click()
  const filters = page.getByRole('form', { name: 'Usage filters' })
  // The chart is first drawn for every account: read it once stack-co's series is in (its
  // canvas alone may be the first one's).
  const filtered = page.waitForResponse(
    (r: any) => r.url().includes('/admin/v1/usage/series') && r.url().includes('account=stack-co'),
  )
  await filters.locator('select[name="account"]').selectOption('stack-co')
  await filtered
  await page.locator('figure#usage-chart canvas').waitFor()
  const data = await chartData(page, 'usage-chart')
  expect(data.head.slice(1).sort()).toEqual(['demo/echo', 'demo/echo-pro'])
  expect(data.rows[data.rows.length - 1]!.slice(1)).toEqual(['2', '2'])
  await page.waitForTimeout(100)
  const { width, cols } = await barColumns(page, 'usage-chart')
  // The current hour's bar: the rightmost coloured columns. Two colours one above the other,
  // of the same height (2 and 2), not one bar hiding the other.
  const drawn = cols.map((runs: any[], x: number) => ({ x, runs })).filter((c: any) => c.runs.length)
  const last = drawn[drawn.length - 1]
  const mid = drawn.filter((c: any) => c.x > last.x - 8 && c.x <= last.x - 4)[0]
  expect(mid.runs.length).toBe(2)
  expect(mid.runs[0].color).not.toBe(mid.runs[1].color)
  expect(Math.abs(mid.runs[0].len - mid.runs[1].len)).toBeLessThanOrEqual(2)
  // Whole: the bar ends inside the plot, and is as wide as a bucket's bar (not cut in half).
  expect(width - 1 - last.x).toBeGreaterThanOrEqual(2)
  const barWidth = drawn.filter((c: any) => c.x > last.x - 100).length
  expect(barWidth).toBeGreaterThanOrEqual(0.7 * (width / 24))

  // One line per key, named by the keys' labels.
  await filters.locator('select[name="group_by"]').selectOption('key')
  await page
    .locator('figure#usage-chart table.chart-data thead th', { hasText: 'web app' })
    .waitFor({ state: 'attached' })
  const byKey = await chartData(page, 'usage-chart')
  expect(byKey.head.slice(1).sort()).toEqual(['stack-co · batch', 'stack-co · web app'])
  expect(byKey.rows[byKey.rows.length - 1]!.slice(1)).toEqual(['2', '2'])
  if (WRITE_SHOTS) await page.screenshot({ path: join(SHOTS, 'usage-by-key.png'), fullPage: true })
}, 60_000)

/** The x span uPlot drew, epoch seconds. */
const xSpan = async (page: any, id: string) => {
  const fig = page.locator(`figure#${id}`)
  await page.waitForFunction((el: any) => el?.dataset.xMin !== undefined, await fig.elementHandle())
  return fig.evaluate((el: any) => [Number(el.dataset.xMin), Number(el.dataset.xMax)])
}

/**
 * The overview test's visit, in a context of its own. It mostly waits for the console's live
 * readings (one every 2 s, the first rate from the second), so it starts with the file (beforeAll)
 * and its test, last as before, awaits it: the other tests' pages run meanwhile. Its account,
 * key and provider are its own (top-co, flaky); the other tests' traffic (five requests of other
 * accounts) is at most what it was when this test ran after them, so top-co still leads the top
 * lists, and nothing else calls the flaky provider.
 */
async function overviewVisit(browser: any) {
  const top = await gw.key('top-co', 'all')
  for (let i = 0; i < 6; i++) expect((await chat(top.key, 'demo/echo')).status).toBe(200)
  // An openai upstream's 503 stays a 503 (DESIGN §10), as in console-overview-api.test.ts.
  for (let i = 0; i < 3; i++) expect((await chat(top.key, 'flaky/m1')).status).toBe(503)
  await Bun.sleep(150)

  const page = await browser.newPage()
  await signIn(page)
  // On arrival, before any live reading could be a rate (two readings, 2 s apart): the hours
  // from the store are there.
  await page.locator('figure#live-traffic canvas').waitFor()
  const first = await chartData(page, 'live-traffic')
  expect(first.rows.length).toBeGreaterThanOrEqual(1)
  expect(first.rows.some((r) => Number(r[1]) > 0)).toBe(true)
  // The stored hours' errors are their own line (any 4xx/5xx, as the rollups count them); the
  // live line is the 5xx share (DESIGN §15: a client's mistakes are not the service's errors).
  const errors = await chartData(page, 'live-errors')
  const hourly = errors.head.indexOf('hourly, any 4xx/5xx %')
  expect(hourly).toBeGreaterThan(0)
  expect(errors.rows.some((r) => Number(r[hourly]) > 0)).toBe(true)
  const now = Date.now() / 1000
  const [min, max] = await xSpan(page, 'live-traffic')
  expect(max).toBeGreaterThan(now - 120)
  expect(max).toBeLessThan(now + 120)
  expect(min).toBeGreaterThan(now - 7 * 3600)

  // Top lists and provider health, where the operator looks first.
  const topKey = page.locator(`[data-testid="top-keys"] tr[data-key="${top.id}"]`)
  await topKey.waitFor()
  expect(await page.locator('[data-testid="top-keys"] tbody tr').first().getAttribute('data-key')).toBe(
    top.id,
  )
  expect(await topKey.textContent()).toContain('top-co')
  expect(
    await page.locator('[data-testid="top-accounts"] tbody tr').first().getAttribute('data-account'),
  ).toBe('top-co')
  const flaky = page.locator('[data-testid="provider-health"] tr[data-provider="flaky"]')
  expect(await flaky.textContent()).toContain('upstream_overloaded')
  expect(
    await page.locator('[data-testid="provider-health"] tbody tr').first().getAttribute('data-provider'),
  ).toBe('flaky')

  // Live readings arrive (the first from the second reading, 2 s after the first); a visit
  // elsewhere and back keeps them: were they reset, none could be back before two more readings.
  await page.waitForFunction(() =>
    [...(globalThis as any).document.querySelectorAll('figure#live-streams table.chart-data tbody tr')].some(
      (tr: any) => tr.children[1]?.textContent !== '',
    ),
  )
  const before = (await chartData(page, 'live-streams')).rows.filter((r) => r[1] !== '').length
  expect(before).toBeGreaterThanOrEqual(1)
  await page.getByRole('link', { name: 'Accounts' }).click()
  await page.getByRole('heading', { name: 'Accounts' }).waitFor()
  await page.getByRole('link', { name: 'Overview' }).click()
  await page.locator('figure#live-streams canvas').waitFor()
  const after = (await chartData(page, 'live-streams')).rows.filter((r) => r[1] !== '').length
  expect(after).toBeGreaterThanOrEqual(before)
  // The live readings up close.
  await page.getByRole('form', { name: 'Traffic window' }).locator('select').selectOption('600')
  await page.waitForFunction(() => {
    const el = (globalThis as any).document.querySelector('figure#live-traffic')
    return el && Number(el.dataset.xMax) - Number(el.dataset.xMin) === 600
  })

  // On a phone: the axis spans the last hours too (it read 2027–2029). The same tab at the
  // phone's size, loaded again: a page of its own would start a renderer of its own (~1 CPU-s).
  const phone = page
  await phone.setViewportSize({ width: 390, height: 844 })
  await phone.goto(`${gw.url}/console`) // signed in already (the browser keeps the cookie)
  await phone.locator('figure#live-latency canvas').waitFor()
  for (const id of ['live-traffic', 'live-errors', 'live-latency', 'live-streams']) {
    const [pmin, pmax] = await xSpan(phone, id)
    expect([id, pmax > now - 120 && pmax < now + 120, pmin > now - 7 * 3600]).toEqual([id, true, true])
  }
  await phone.close()
}

test('overview: the stored hours on arrival, live figures kept across visits, the axis on the present, top lists and provider health', async () => {
  if (!tab) return
  await overview
}, 90_000)
