/**
 * What the operator sees (DESIGN §15, issue 43), in Chromium against a real gateway and a real
 * fault-scripted upstream: the overview shows today's spend, per account and key beside the
 * budgets they burn, the attempts and failures of a model that fails every attempt while its
 * fallback answers, both of its keys' circuits open, and refusals of every code; a client's own
 * 400s (the upstream refusing what it sent) and 499s (it left) are no provider's error, in the
 * provider health and in the live error figures; the keys page shows each key's limits and spend;
 * at 390 px nothing is wider than the screen and the charts' axes keep their digits; the alerts
 * page lists the deliveries of the circuits' `circuit.opened` to a receiver that is down (state,
 * tries, last error, next try), naming the webhook by its host alone (a Slack URL's path is its
 * credential). With SWITCHYARD_SCREENSHOTS=1 the overview (1280 px and 390 px), the keys page and
 * the alerts page are written to docs/console/.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { usd } from '../../../src/console/ui/money.ts'
import { sharedChromium } from '../../support/browser.ts'
import { startFaultUpstream } from '../../support/fault-upstream.ts'
import { ADMIN_TOKEN, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach, beforeEach } from '../../support/hooks.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts'

const chromium = sharedChromium(
  'console operator browser test (test/e2e/console/console-operator-browser.test.ts)',
)

const SHOTS = join(import.meta.dir, '../../../docs/console')
const WRITE_SHOTS = process.env.SWITCHYARD_SCREENSHOTS === '1'

let gw: TestGateway
let up: Awaited<ReturnType<typeof startFaultUpstream>>
let browser: any
let hook: WebhookReceiver
/** An OpenAI-wire upstream whose every answer read 1,000 of its 1,300 prompt tokens from its cache. */
let cachy: ReturnType<typeof Bun.serve>
/** A Slack-like webhook URL: the path and the query are the credential, never to be shown. */
let hookUrl: string

const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 8192,
  max_output_tokens: 1024,
  features: ['streaming'],
  ...extra,
})
/** USD per 1M tokens: 10 prompt + 12 completion tokens (the fault upstream's) cost $0.0034. */
const PRICING = { input: 100, output: 200 }

beforeAll(async () => {
  up = await startFaultUpstream()
  up.script({ model: 'bad' }, 'unavailable')
  up.script({ model: 'picky' }, 'bad_request')
  up.script({ model: 'slow' }, { fault: 'stall', after: 2 })
  // Long answers, for a tokens axis in the tens of thousands.
  up.script({ model: 'long' }, { fault: 'ok', words: 6000 })
  const base_url = `${up.url}/v1`
  cachy = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (req) => {
      const body = (await req.json()) as { model: string; stream?: boolean }
      const usage = {
        prompt_tokens: 1300,
        completion_tokens: 2,
        total_tokens: 1302,
        prompt_tokens_details: { cached_tokens: 1000 },
      }
      const head = { id: 'chatcmpl-cache', created: 0, model: body.model }
      if (!body.stream)
        return Response.json({
          ...head,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'warm' }, finish_reason: 'stop' }],
          usage,
        })
      // A key with a token limit is served streamed upstream (DESIGN §11): the usage comes last.
      const chunk = (c: object) =>
        `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', ...c })}\n\n`
      const text =
        chunk({
          choices: [{ index: 0, delta: { role: 'assistant', content: 'warm' }, finish_reason: null }],
        }) +
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
        chunk({ choices: [], usage }) +
        'data: [DONE]\n\n'
      return new Response(text, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  hook = startWebhookReceiver()
  hook.down = true
  hookUrl = `${new URL(hook.url).origin}/services/T0SECRET/B0SECRET/x0secret0path?token=hushhush`
  gw = await startGateway({
    doc: testConfigDoc({
      usage: { flush_ms: 20 },
      // The receiver is down: each delivery is tried once, then waits ten minutes for its next try.
      alerts: {
        webhooks: [{ url: hookUrl, secret: 'whsec-0123456789abcdef', events: ['circuit.opened'] }],
        poll_ms: 20,
        backoff_ms: 600_000,
      },
      providers: [
        {
          prefix: 'mock',
          kind: 'openai',
          base_url,
          keys: [{ api_key: 'sk-mock-a-0123456789' }, { api_key: 'sk-mock-b-0123456789' }],
          // One failure opens a (key, model) circuit; one retry moves to the pool's other key.
          retry: { attempts: 1, backoff_ms: 1 },
          circuit: { failures: 1, cooldown_s: 600 },
          models: [
            model('good', { pricing: PRICING }),
            model('bad', { pricing: PRICING, fallbacks: ['mock/good'] }),
          ],
        },
        {
          prefix: 'strict',
          kind: 'openai',
          base_url,
          api_key: 'sk-strict-0123456789',
          models: [
            model('picky', { pricing: PRICING }),
            model('slow', { pricing: PRICING }),
            model('long', { max_output_tokens: 8192 }),
          ],
        },
        // No pricing: the spend figures stay the fault upstream's; its cache reads show per key.
        {
          prefix: 'cachy',
          kind: 'openai',
          base_url: `http://127.0.0.1:${cachy.port}/v1`,
          api_key: 'sk-cachy-0123456789',
          models: [model('agent')],
        },
      ],
      plans: {
        ...PLANS,
        metered: { rpm: null, rpd: null, models: ['*'], budget: { usd: 1, period: 'month' } },
      },
    }),
  })
  if (WRITE_SHOTS) mkdirSync(SHOTS, { recursive: true })
})

// A fresh browser context per test, from the file's one Chromium (../support/browser.ts), in
// beforeEach (the suite's timeout, not Bun's 5 s: ../support/hooks.ts).
beforeEach(async () => {
  browser = await chromium.context()
})

afterEach(async () => {
  await browser?.close()
})

afterAll(async () => {
  await gw?.stop()
  await up?.stop()
  await hook?.stop()
  cachy?.stop(true)
})

const admin = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`${gw.url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return (await r.json()) as any
}

const chat = (key: string, m: string, stream = false, signal?: AbortSignal) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: m, stream, messages: [{ role: 'user', content: 'hi' }] }),
    signal,
  })

/** Waits until the request log holds `n` finished rows and the rollups have them. */
async function settle(n: number) {
  for (let i = 0; i < 300; i++) {
    await gw.deps.recorder.flush()
    const page = await gw.deps.store.requestLog({ limit: 200 })
    if (page.rows.length >= n && page.rows.every((r) => r.status !== null)) return
    await Bun.sleep(20)
  }
  throw new Error('outcomes not stored')
}

/**
 * Waits for the overview's first live reading (its charts' rows past the store's hours, which sit
 * at each hour's start): the charts as they are drawn once the live figures arrive, 2 s after the
 * page (a few more with screenshots, for the charts in them).
 */
async function liveReading(page: any) {
  await page.waitForFunction(() =>
    [...(globalThis as any).document.querySelectorAll('figure#live-traffic table.chart-data tbody th')].some(
      (th: any) => Number(th.dataset.t) % 3600 !== 0,
    ),
  )
  if (WRITE_SHOTS) await page.waitForTimeout(2500)
}

test('overview: spend beside budgets, model health and open circuits, refusals; client mistakes are not provider errors; keys page limits and spend; a phone fits', async () => {
  if (!browser) return
  await admin('POST', '/accounts', { name: 'acme', plan: 'metered' })
  const budgeted = await admin('POST', '/keys', {
    account: 'acme',
    name: 'ci',
    limits: { tpm: 50_000, budget: { usd: 0.5, period: 'day' } },
  })
  expect(budgeted.key).toStartWith('sk-')
  const { key: freeKey } = await gw.key('free-co', 'free')

  // Two answers of mock/good; mock/bad fails on both keys (both circuits open), then its fallback
  // answers; the next goes straight to the fallback.
  expect((await chat(budgeted.key, 'mock/good')).status).toBe(200)
  expect((await chat(budgeted.key, 'mock/good')).status).toBe(200)
  const viaFallback = await chat(budgeted.key, 'mock/bad')
  expect([viaFallback.status, viaFallback.headers.get('x-switchyard-attempts')]).toEqual([200, '3'])
  expect((await chat(budgeted.key, 'mock/bad')).status).toBe(200)
  // The client's own mistakes at `strict`: the upstream refuses what it sent (400, twice), and a
  // stream it leaves (499).
  expect((await chat(budgeted.key, 'strict/picky')).status).toBe(400)
  expect((await chat(budgeted.key, 'strict/picky')).status).toBe(400)
  const leave = new AbortController()
  const slow = await chat(budgeted.key, 'strict/slow', true, leave.signal)
  const reader = slow.body!.getReader()
  await reader.read()
  leave.abort()
  await reader.closed.catch(() => {})
  // 12,000 tokens and more in this hour, at no cost (no pricing).
  expect((await chat(budgeted.key, 'strict/long')).status).toBe(200)
  expect((await chat(budgeted.key, 'strict/long')).status).toBe(200)
  // An agent's turn whose prompt the provider's cache mostly answered.
  expect((await chat(budgeted.key, 'cachy/agent')).status).toBe(200)
  // A refusal before admission: the free plan does not reach mock's models.
  expect((await chat(freeKey, 'mock/good')).status).toBe(403)
  await settle(10)
  for (let i = 0; i < 300; i++) {
    const log = await gw.deps.store.requestLog({ limit: 200 })
    if (log.rows.some((r) => r.status === 499)) break
    await Bun.sleep(20)
  }

  // The live figures: no 5xx answered at all; the two 400s, the 499 and the 403 are the
  // client's, apart.
  const live = await admin('GET', '/live')
  expect([live.errors_total, live.client_errors_total]).toEqual([0, 4])

  const page = await browser.newPage()
  await page.goto(`${gw.url}/console`)
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Overview' }).waitFor()

  // Spend: what the request log recorded (4 answers × $0.0034 and the stream the client left,
  // settled to what was relayed), all acme's, beside its $1/month budget and the key's $0.50/day.
  const log = await gw.deps.store.requestLog({ limit: 200 })
  const spent = usd(log.rows.reduce((s, r) => s + (r.costMicros ?? 0), 0) / 1e6)
  expect(log.rows.filter((r) => r.costMicros).length).toBe(5)
  await page.waitForFunction(
    (want: string) =>
      (globalThis as any).document.querySelector('[data-testid="spend-today"] .v')?.textContent === want,
    spent,
  )
  expect(await page.locator('[data-testid="spend-month"] .v').textContent()).toBe(spent)
  const acme = page.locator('[data-testid="spend-accounts"] tr[data-account="acme"]')
  expect(await acme.textContent()).toContain(`${spent} of $1.00/month`)
  const ci = page.locator(`[data-testid="spend-keys"] tr[data-key="${budgeted.id}"]`)
  expect(await ci.textContent()).toContain(`${spent} of $0.50/day`)
  // Beside it, the prompt tokens its providers' caches read and wrote this month.
  expect(await ci.locator('td[data-col="cached"]').textContent()).toBe('1,000 read · 0 written')

  // The client's 400s and 499 raise no error rate of strict's: they are its own, apart.
  const strict = page.locator('[data-testid="provider-health"] tr[data-provider="strict"]')
  expect(await strict.locator('td[data-col="rate"]').textContent()).toBe('0 %')
  expect(await strict.locator('td[data-col="client"]').textContent()).toBe('3')
  // Health: mock answered everything (its fallback did), yet mock/bad failed every attempt and
  // both of its keys' circuits are open.
  const mock = page.locator('[data-testid="provider-health"] tr[data-provider="mock"]')
  expect(await mock.locator('td').allInnerTexts()).toEqual(['mock', '4', '0', '0 %', '', '0', '0', '2', '—'])
  const bad = page.locator('[data-testid="model-attempts"] tr[data-model="mock/bad"]')
  expect((await bad.locator('td').allInnerTexts()).slice(0, 4)).toEqual(['mock/bad', '2', '2', '0'])
  // The upstream refusing what the client sent is no failure of the provider's.
  const picky = page.locator('[data-testid="model-attempts"] tr[data-model="strict/picky"]')
  expect((await picky.locator('td').allInnerTexts()).slice(0, 4)).toEqual(['strict/picky', '2', '0', '2'])
  const open = page.locator('[data-testid="circuits"] tr[data-state="open"]')
  expect(await open.count()).toBe(2)
  expect((await open.allInnerTexts()).map((t: string) => t.replace(/\s+/g, ' ').trim()).sort()).toEqual([
    'mock #0 bad open',
    'mock #1 bad open',
  ])
  // Refusals of every code, not only 429s.
  expect(
    await page.locator('[data-testid="refusal-codes"] tr[data-code="model_not_in_plan"]').textContent(),
  ).toContain('403')
  await liveReading(page)
  // The y axes keep their digits: no two ticks read the same (0.0015 and 0.002, not 0.002 twice).
  for (const id of ['live-traffic', 'live-errors', 'live-latency', 'live-streams']) {
    const ticks = JSON.parse(await page.locator(`figure#${id}`).getAttribute('data-y-ticks'))
    expect([id, new Set(ticks).size]).toEqual([id, ticks.length])
  }
  if (WRITE_SHOTS) await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true })

  // The keys page: each key's own limits and its spend beside its budget.
  await page.getByRole('link', { name: 'Keys' }).click()
  const row = page.locator(`[data-testid="key-spend"] tr[data-key-spend="${budgeted.id}"]`)
  await row.locator('td[data-col="budget"] .burn').waitFor()
  expect(await row.locator('td[data-col="limits"]').textContent()).toBe('tpm 50,000 · $0.50/day')
  expect(await row.locator('td[data-col="today"]').textContent()).toBe(spent)
  expect(await row.locator('td[data-col="month"]').textContent()).toBe(spent)
  expect(await row.locator('td[data-col="cached"]').textContent()).toBe('1,000 read · 0 written')
  expect(await row.locator('td[data-col="budget"]').textContent()).toContain(`${spent} of $0.50/day`)
  if (WRITE_SHOTS) await page.screenshot({ path: join(SHOTS, 'keys.png'), fullPage: true })

  // The alerts page: both circuits' `circuit.opened`, tried once each at a receiver that answers
  // 503, waiting for their next try; the webhook by its host alone.
  for (let i = 0; i < 500; i++) {
    const d = await admin('GET', '/deliveries')
    if (d.data.length === 2 && d.data.every((x: any) => x.attempts === 1)) break
    await Bun.sleep(20)
  }
  await page.getByRole('link', { name: 'Alerts' }).click()
  const deliveries = page.locator('[data-testid="deliveries"] tbody tr')
  await deliveries.nth(1).waitFor()
  const rows = (await deliveries.evaluateAll((trs: any[]) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td: any) => td.textContent)),
  )) as string[][]
  const host = new URL(hook.url).host
  expect(rows.map((r) => r.slice(1, 6))).toEqual([
    ['circuit.opened', host, 'pending', '1', 'answered 503'],
    ['circuit.opened', host, 'pending', '1', 'answered 503'],
  ])
  // The next try is shown (ten minutes on), and nothing of the URL past its host is anywhere.
  expect(rows.every((r) => r[6] !== '—')).toBe(true)
  const html = await page.content()
  for (const secret of ['T0SECRET', 'x0secret0path', 'hushhush', '/services'])
    expect(html).not.toContain(secret)
  if (WRITE_SHOTS) await page.screenshot({ path: join(SHOTS, 'alerts.png'), fullPage: true })

  // Tokens per hour in the tens of thousands: the y axis is as wide as its widest label (a fixed
  // 50 px cut `12,000` to `2,000`).
  await page.getByRole('link', { name: 'Usage' }).click()
  await page.locator('select[name="metric"]').selectOption('total_tokens')
  await page.waitForFunction(() => {
    const fig = (globalThis as any).document.querySelector('figure#usage-chart')
    return (JSON.parse(fig?.dataset.yTicks ?? '[]') as string[]).some((t) => t.length >= 6)
  })
  const axis = await page.locator('figure#usage-chart').evaluate((fig: any) => {
    const labels = JSON.parse(fig.dataset.yTicks) as string[]
    const ctx = fig.ownerDocument.createElement('canvas').getContext('2d')
    ctx.font = '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
    const widest = Math.max(...labels.map((l) => ctx.measureText(l).width))
    // uPlot's y axis: the second axis element, as wide as its `size`.
    const y = fig.querySelectorAll('.u-axis')[1]
    return { labels, widest, width: y.getBoundingClientRect().width }
  })
  // The label, the tick (10 px) and its gap (5 px) fit.
  expect([axis.labels, axis.width >= axis.widest + 15]).toEqual([axis.labels, true])

  // A phone: the page is the screen's width, and the y axes are wide enough for their labels.
  // The same tab at the phone's size, loaded again: a page of its own would start a renderer of
  // its own (~1 CPU-s on this host).
  const phone = page
  await phone.setViewportSize({ width: 390, height: 844 })
  await phone.goto(`${gw.url}/console`)
  await phone.locator('figure#live-latency canvas').waitFor()
  await phone.locator('[data-testid="circuits"] tr[data-state="open"]').first().waitFor()
  await liveReading(phone)
  const widths = await phone.evaluate(() => {
    const d = (globalThis as any).document
    return [d.documentElement.scrollWidth, d.body.scrollWidth]
  })
  expect(widths).toEqual([390, 390])
  if (WRITE_SHOTS) await phone.screenshot({ path: join(SHOTS, 'overview-phone.png'), fullPage: true })
  await phone.close()
}, 90_000)
