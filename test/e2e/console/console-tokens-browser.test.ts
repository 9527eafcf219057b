/**
 * Tokens and money in the console, in a real browser (Debian's Chromium through playwright-core)
 * against the real gateway: a key created with limits and edited (a limit above the plan refused
 * with the field named), each request's cost in the request log, cost over time on the usage page,
 * the plan's budget with what is spent on the accounts page; an answer without upstream usage
 * marked "estimated" in the request log (DESIGN §11 "One ledger").
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { sharedChromium } from '../../support/browser.ts'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach, beforeEach } from '../../support/hooks.ts'

const chromium = sharedChromium(
  'console token and money browser tests (test/e2e/console/console-tokens-browser.test.ts)',
)

const TOKEN = 'console-admin-token-0123456789-abcdefghij'
let gw: TestGateway
let browser: any
/** An upstream that never reports usage: its answers are settled (and recorded) as estimated. */
let mute: BillingUpstream

beforeAll(async () => {
  const provider = structuredClone(DEMO_PROVIDER) as any
  provider.models[0].pricing = { input: 1, output: 2 } // 1 and 2 micro-dollars a token
  mute = await startBillingUpstream({ answerTokens: 20, usage: false })
  const quiet = {
    name: 'quiet',
    context_window: 8192,
    max_output_tokens: 1024,
    features: ['streaming', 'system_messages'],
    pricing: { input: 1, output: 2 },
  }
  gw = await startGateway({
    doc: testConfigDoc({
      admin: { token: TOKEN },
      usage: { flush_ms: 20 },
      providers: [
        provider,
        { prefix: 'mute', kind: 'openai', base_url: mute.url, api_key: 'sk-up', models: [quiet] },
      ],
      plans: {
        free: { rpm: 5, rpd: 100, models: ['tier:free'] },
        metered: { rpm: 20, rpd: null, tpm: 50_000, budget: { usd: 10, period: 'month' }, models: ['*'] },
      },
    }),
  })
  await gw.deps.accounts.createAccount('acme', 'metered')
})
beforeEach(async () => {
  browser = await chromium.context()
})
afterEach(async () => {
  await browser?.close()
})
afterAll(async () => {
  await gw?.stop()
  await mute?.stop()
})

const adminJson = async (path: string) =>
  (await (
    await fetch(`${gw.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).json()) as any

test('key limits (create, edit, refused above the plan), costs in the log and over time, budgets', async () => {
  if (!browser) return
  // On an account of its own (acme's figures below are its two requests): no usage upstream.
  const { key: quietKey } = await gw.key('quiet', 'metered')
  const estimated = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${quietKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'mute/quiet',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 50,
    }),
  })
  expect(estimated.status).toBe(200)
  await estimated.text()
  const estimatedId = estimated.headers.get('x-request-id')!
  const page = await browser.newPage()
  await page.goto(`${gw.url}/console`)
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Overview' }).waitFor()

  // Create a key with limits of its own.
  await page.getByRole('link', { name: 'Keys' }).click()
  const keyForm = page.getByRole('form', { name: 'Create a key' })
  await keyForm.locator('select[name="account"]').selectOption('acme')
  await keyForm.getByLabel('Label (optional)').fill('limited')
  await keyForm.getByLabel('Tokens/min').fill('4000')
  await keyForm.getByLabel('Budget (USD)').fill('0.5')
  await keyForm.getByLabel('per').selectOption('day')
  await keyForm.getByLabel(/^Models/).fill('demo/echo')
  await keyForm.getByRole('button', { name: 'Create key' }).click()
  const secret = (await page.getByTestId('new-secret').textContent()).trim()
  await page.getByRole('button', { name: /I have stored it/ }).click()
  const made = (await adminJson('/keys?account=acme')).data[0]
  expect(made.limits).toEqual({
    rpm: null,
    rpd: null,
    tpm: 4000,
    tpd: null,
    budget: { usd: 0.5, period: 'day' },
    models: ['demo/echo'],
  })

  // Edit: the editor shows the key's limits; above the plan is refused, naming the field.
  const editor = page.getByTestId('key-limits-form')
  await editor.locator('select[name="key"]').selectOption(made.id)
  expect(await editor.getByLabel('Tokens/min').inputValue()).toBe('4000')
  expect(await editor.getByLabel('Budget (USD)').inputValue()).toBe('0.5')
  await editor.getByLabel('Tokens/min').fill('60000')
  await editor.getByRole('button', { name: 'Save limits' }).click()
  await page
    .getByRole('alert')
    .filter({ hasText: "tpm: 60000 is above the account's plan 'metered'" })
    .waitFor()
  await editor.getByLabel('Tokens/min').fill('3000')
  await editor.getByLabel(/^Models/).fill('') // cleared: every model of the plan
  await editor.getByRole('button', { name: 'Save limits' }).click()
  await page.getByRole('status').filter({ hasText: 'Saved: tpm 3,000 · $0.50/day' }).waitFor()
  expect((await adminJson(`/keys/${made.id}`)).limits).toMatchObject({ tpm: 3000, models: null })

  // Real requests with that key: each one's cost in the request log.
  const costs: number[] = []
  const ids: string[] = []
  for (const word of ['alpha', 'beta beta']) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: `hello ${word}` }] }),
    })
    expect(res.status).toBe(200)
    const u = ((await res.json()) as any).usage
    costs.push(u.prompt_tokens + 2 * u.completion_tokens)
    ids.push(res.headers.get('x-request-id')!)
  }
  await Bun.sleep(150)
  const usd = (micros: number) => {
    const t = (micros / 1e6).toFixed(6).replace(/0+$/, '')
    const [w, f = ''] = t.split('.')
    return `$${w}.${f.padEnd(2, '0')}`
  }
  await page.getByRole('link', { name: 'Request log' }).click()
  for (const [i, id] of ids.entries()) {
    const row = page.locator(`tr[data-request-id="${id}"]`)
    await row.waitFor()
    expect(await row.textContent()).toContain(usd(costs[i]!))
  }
  await page.locator(`tr[data-request-id="${ids[0]}"]`).click()
  expect(await page.getByTestId('request-detail').textContent()).toContain(`cost${usd(costs[0]!)}`)
  expect(await page.getByTestId('request-detail').textContent()).toContain('as the upstream reported')
  // Counted by the upstream: no mark. Settled by the gateway without usage: marked, and said so.
  expect(await page.locator(`tr[data-request-id="${ids[0]}"]`).getByTestId('estimated').count()).toBe(0)
  const marked = page.locator(`tr[data-request-id="${estimatedId}"]`)
  await marked.getByTestId('estimated').waitFor()
  await marked.click()
  expect(await page.getByTestId('request-detail').textContent()).toContain(
    'estimated by the gateway (no usage from the upstream)',
  )

  // Cost over time on the usage page: the chart's data and the totals.
  await page.getByRole('link', { name: 'Usage' }).click()
  const filters = page.getByRole('form', { name: 'Usage filters' })
  await filters.locator('select[name="account"]').selectOption('acme')
  await filters.locator('select[name="metric"]').selectOption('cost_usd')
  await page.locator('figure#usage-chart canvas').waitFor()
  const fig = page.locator('figure#usage-chart')
  await fig.locator('summary').click()
  const rows = await fig
    .locator('table.chart-data tbody tr')
    .evaluateAll((trs: any[]) => trs.map((tr) => [...tr.children].map((c: any) => c.textContent)))
  const total = costs[0]! + costs[1]!
  // Each bucket's cost as the console shows money (`$0.000123`).
  expect(rows.every((r: string[]) => r[1]!.startsWith('$'))).toBe(true)
  const micros = (text: string) => Math.round(Number(text.replace(/[$,]/g, '')) * 1e6)
  expect(rows.reduce((a: number, r: string[]) => a + micros(r[1]!), 0)).toBe(total)
  expect(await page.locator('table').last().textContent()).toContain(usd(total))

  // The plan's budget on the accounts page: spent and left in this month.
  await page.getByRole('link', { name: 'Accounts' }).click()
  const budget = page.getByTestId('budgets').locator('tr[data-account="acme"]')
  await budget.waitFor()
  const u = await adminJson('/accounts/acme/usage')
  const text = await budget.textContent()
  expect(text).toContain('$10.00/month')
  expect(text).toContain(usd(Math.round(u.budget.spent_usd * 1e6)))
  // Settled: the account's spend is what its two requests cost.
  expect(u.budget.spent_usd).toBe(total / 1e6)
  expect(text).toContain(usd(total))
  expect(text).toContain(usd(10_000_000 - total))
  expect(text).toContain(usd(Math.round(u.budget.remaining_usd * 1e6)))

  // The plans page shows the token limits and the budget.
  await page.getByRole('link', { name: 'Plans' }).click()
  const metered = page.getByRole('row').filter({ hasText: /^metered/ })
  await metered.waitFor()
  expect(await metered.textContent()).toContain('50,000')
  expect(await metered.textContent()).toContain('$10.00/month')

  // The key holder's page: the key's own budget (it leaves less than the plan's) and today's cost.
  // In the same tab: a page of its own would start a renderer of its own (~1 CPU-s on this host).
  const me = page
  await me.goto(`${gw.url}/console/me`)
  await me.getByLabel('API key').fill(secret)
  await me.getByRole('button', { name: 'Sign in' }).click()
  await me.getByTestId('me-budget').waitFor()
  const mine = await me.getByTestId('me-budget').textContent()
  expect(mine).toContain(`${usd(500_000 - total)} / $0.50`)
  expect(mine).toContain('budget left this day (this key)')
  expect(await me.getByTestId('me-today-cost').textContent()).toContain(usd(total))
  expect(await me.locator('.tiles').textContent()).toContain('tokens left this minute')
  await me.close()
}, 120_000)
