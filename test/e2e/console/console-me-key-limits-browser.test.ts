/**
 * The key holder's page (`/console/me`) shows what is left of the limits that apply to this key
 * (README, "Where to look": "a key holder's own page shows the tokens left, the budget that
 * applies"): of the account's and the key's own, the one with less left, as admission and the
 * budget tile choose. The request and token tiles showed the account's alone, so a key held to 2
 * requests and 600 tokens a minute on a plan of 20 and 50,000 read "19 / 20" and "49,… / 50,000"
 * left while its next request would be refused.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sharedChromium } from '../../support/browser.ts'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach, beforeEach } from '../../support/hooks.ts'

const chromium = sharedChromium(
  'the key holder page browser test (test/e2e/console/console-me-key-limits-browser.test.ts)',
)

let gw: TestGateway
let browser: any

beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      usage: { flush_ms: 20 },
      providers: [DEMO_PROVIDER],
      plans: {
        free: { rpm: 5, rpd: 100, models: ['tier:free'] },
        metered: { rpm: 20, rpd: null, tpm: 50_000, tpd: null, models: ['*'] },
      },
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

test("the key holder's page shows the key's own request and token limits where they leave less", async () => {
  if (!browser) return
  const { id, key } = await gw.key('acme', 'metered')
  await gw.deps.store.setKeyLimits(id, {
    rpm: 2,
    rpd: null,
    tpm: 600,
    tpd: 5_000,
    budgetMicros: null,
    budgetPeriod: null,
    models: null,
  })
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo/echo', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
  })
  expect(r.status).toBe(200)
  await r.text()
  // Settled (flush_ms 20): the page and this read see the same figures.
  await Bun.sleep(300)
  const u = (await (
    await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as any
  const own = u.account_information.key.rate_limits

  const me = await browser.newPage()
  await me.goto(`${gw.url}/console/me`)
  await me.getByLabel('API key').fill(key)
  await me.getByRole('button', { name: 'Sign in' }).click()
  await me.getByTestId('me-minute').waitFor()
  const minute = await me.getByTestId('me-minute').textContent()
  expect(minute).toContain('1 / 2')
  expect(minute).toContain('left this minute (this key)')
  // The plan sets no rpd and the key none: no limit.
  expect(await me.getByTestId('me-day').textContent()).toContain('no limit')
  const tokens = await me.getByTestId('me-tokens-minute').textContent()
  expect(tokens).toContain(`${own.tokens_minute.remaining} / 600`)
  expect(tokens).toContain('tokens left this minute (this key)')
  // The plan sets no tpd; the key's own applies.
  const day = await me.getByTestId('me-tokens-day').textContent()
  expect(day).toContain(`${own.tokens_day.remaining.toLocaleString('en-US')} / 5,000`)
  await me.close()
}, 120_000)
