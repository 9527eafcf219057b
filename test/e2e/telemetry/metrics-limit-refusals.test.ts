/**
 * `/metrics` says which limit refused a request (DESIGN §9, §11). `switchyard_rate_limited_total`
 * was labelled by window alone, so a request limit (rpm) and a token limit (tpm) refusing in the
 * same minute were one series: an operator could not see which limit bites. It is labelled by the
 * limit's `resource` (`requests` | `tokens`) too now, for the account's rows and a key's own. A
 * budget's 402 is no rate limit: it stays out of that counter and is counted by
 * `switchyard_budget_refused_total{period}`, where there was no counter of budget refusals at all
 * (only `switchyard_requests_total{status="402"}`, beside every other 402).
 */
import { expect, test } from 'bun:test'
import { getMetricsFromIterator, type PromMetric } from 'prom2javascript'
import { afterEach } from '../../support/hooks.ts'
import { type SurfaceName, startTokensBed, type TokensBed, tokensRequest } from '../../support/tokens-bed.ts'

let bed: TokensBed | undefined
afterEach(async () => {
  await bed?.stop()
  bed = undefined
})

const samples = (f: PromMetric | undefined) =>
  (f?.data ?? []) as Array<{ labels: Record<string, string>; value: number }>

async function scrape(url: string): Promise<Map<string, PromMetric>> {
  const text = await (await fetch(`${url}/metrics`)).text()
  return new Map(Object.entries(await getMetricsFromIterator(text.split('\n')[Symbol.iterator]())))
}

/** Sends requests one at a time until one is refused; returns the refusal's status. */
async function untilRefused(key: string, surface: SurfaceName = 'chat'): Promise<number> {
  for (let i = 0; i < 10; i++) {
    const r = await tokensRequest(bed!.gw.url, key, surface, false, 200)
    await r.arrayBuffer()
    if (r.status !== 200) return r.status
  }
  throw new Error('never refused')
}

const NO_KEY_LIMITS = {
  rpm: null,
  rpd: null,
  tpm: null,
  tpd: null,
  budgetMicros: null,
  budgetPeriod: null,
  models: null,
}

test('rate-limit refusals are counted by resource and window, for account and key rows; a budget 402 by its period', async () => {
  // 200 output tokens at $12.50 / 1M: $0.0025 a request; input free.
  bed = await startTokensBed(
    {
      requests: { rpm: 1, rpd: null, models: ['*'] },
      tokens: { rpm: null, rpd: null, tpm: 600, models: ['*'] },
      daily: { rpm: null, rpd: 1, models: ['*'] },
      open: { rpm: null, rpd: null, models: ['*'] },
      metered: { rpm: null, rpd: null, budget: { usd: 0.005, period: 'month' }, models: ['*'] },
    },
    { pricing: { input: 0, output: 12.5 }, answerTokens: 200 },
  )
  const gw = bed.gw
  // The account's rows: rpm, tpm, rpd.
  expect(await untilRefused((await gw.key('a-rpm', 'requests')).key)).toBe(429)
  expect(await untilRefused((await gw.key('a-tpm', 'tokens')).key)).toBe(429)
  expect(await untilRefused((await gw.key('a-rpd', 'daily')).key, 'messages')).toBe(429)
  // A key's own rows, within an account that has none: its rpm, then its tpm.
  const keyRpm = await gw.key('k-rpm', 'open')
  await gw.deps.store.setKeyLimits(keyRpm.id, { ...NO_KEY_LIMITS, rpm: 1 })
  expect(await untilRefused(keyRpm.key, 'responses')).toBe(429)
  const keyTpm = await gw.key('k-tpm', 'open')
  await gw.deps.store.setKeyLimits(keyTpm.id, { ...NO_KEY_LIMITS, tpm: 600 })
  expect(await untilRefused(keyTpm.key)).toBe(429)
  // The budget: two requests at $0.0025 spend it, the third is a 402.
  expect(await untilRefused((await gw.key('budget', 'metered')).key)).toBe(402)

  // A request is counted once its response is out, which the client may see first.
  let m = await scrape(gw.url)
  for (let i = 0; i < 40; i++) {
    if (samples(m.get('switchyard_budget_refused_total')).length) break
    await Bun.sleep(25)
    m = await scrape(gw.url)
  }
  const limited = samples(m.get('switchyard_rate_limited_total'))
  // Window alone, the account's rpm and a key's tpm were one series.
  expect(limited.map((s) => `${s.labels.resource} ${s.labels.window} ${s.value}`).sort()).toEqual([
    // The account's rpd, and the account's and the key's rpm.
    'requests day 1',
    'requests minute 2',
    // The account's tpm and the key's.
    'tokens minute 2',
  ])
  expect(samples(m.get('switchyard_budget_refused_total'))).toEqual([
    { labels: { period: 'month' }, value: 1 },
  ])
  const statuses = samples(m.get('switchyard_requests_total'))
  const count = (status: string) =>
    statuses.filter((s) => s.labels.status === status).reduce((n, s) => n + s.value, 0)
  expect(count('429')).toBe(5)
  expect(count('402')).toBe(1)
})
