/**
 * The budget threshold check after each usage flush reads the store only when something can have
 * crossed (issue 43's bench: the check read the account, the key and their rows on every flush).
 * Through the real gateway, a fault upstream and a webhook receiver on real sockets: after the
 * first look, flushes whose charges stay short of the next threshold read nothing; the flush that
 * crosses 50 % reads and the alert is delivered; a crossing this process could not see coming
 * (another gateway on the same database charged the account) is found by the sweep REFRESH_MS
 * later, though no request comes again.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { REFRESH_MS } from '../../../src/alerts/thresholds.ts'
import { ManualClock } from '../../../src/util/clock.ts'
import { type FaultUpstream, startFaultUpstream } from '../../support/fault-upstream.ts'
import {
  bearer,
  PLANS,
  startGateway,
  type TestGateway,
  tempDir,
  testConfigDoc,
} from '../../support/gateway.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts'

const dir = tempDir('switchyard-threshold-reads-')
const dbPath = join(dir, 'switchyard.db')
// Mid-month: no period ends while the test runs.
const clock = new ManualClock(Date.UTC(2026, 10, 10, 12))
let up: FaultUpstream
let hook: WebhookReceiver
let gw: TestGateway
let other: TestGateway
let key: string
let reads = 0

function doc(withWebhook: boolean) {
  return testConfigDoc({
    providers: [
      {
        prefix: 'up',
        kind: 'openai',
        base_url: `${up.url}/v1`,
        api_key: 'sk-up-0001',
        // $0.01 an output token: each answer here costs $0.16 of the $3 budget (its 16-token
        // allowance; the figures below follow from it and the test checks them).
        models: [
          {
            name: 'm1',
            context_window: 8192,
            max_output_tokens: 16,
            // Streamed: under the budget the answer is asked as a stream and cut at the allowance.
            features: ['streaming', 'system_messages'],
            pricing: { input: 0, output: 10_000 },
          },
        ],
      },
    ],
    plans: {
      ...PLANS,
      metered: { rpm: null, rpd: null, budget: { usd: 3, period: 'month' }, models: ['*'] },
    },
    usage: { flush_ms: 20 },
    ...(withWebhook
      ? {
          alerts: {
            webhooks: [
              { url: hook.url, secret: 'whsec-test-0123456789abcdef', events: ['budget.threshold'] },
            ],
            poll_ms: 20,
          },
        }
      : {}),
  })
}

async function chat(g: TestGateway): Promise<void> {
  const res = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'up/m1', messages: [{ role: 'user', content: 'hi' }] }),
  })
  await res.arrayBuffer()
  expect(res.status).toBe(200)
}

/** The request's outcome flushed and the threshold check it started finished. */
async function settled(g: TestGateway): Promise<void> {
  await g.deps.recorder.flush()
  await g.deps.alerts.thresholds.written([], () => clock.now())
}

async function until<T>(what: string, f: () => T | undefined): Promise<T> {
  const end = Date.now() + 15_000
  for (;;) {
    const v = f()
    if (v) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

const alerted = (t: number) =>
  hook.got.find((g) => g.event === 'budget.threshold' && g.doc.data.threshold_percent === t)

beforeAll(async () => {
  up = await startFaultUpstream()
  hook = startWebhookReceiver()
  gw = await startGateway({ doc: doc(true), dbPath, clock })
  other = await startGateway({ doc: doc(false), dbPath, clock })
  key = (await gw.key('acme', 'metered')).key
  // What the threshold check reads: the account, the key, their rows.
  const store = gw.deps.store
  for (const name of ['getAccount', 'getKey', 'rowStates'] as const) {
    const read = (store[name] as (...a: unknown[]) => unknown).bind(store)
    ;(store as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => {
      reads++
      return read(...a)
    }
  }
})
afterAll(async () => {
  await other?.stop()
  await gw?.stop()
  await hook?.stop()
  await up?.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('flushes that cannot cross a threshold read nothing; the one that crosses reads and alerts', async () => {
  await chat(gw)
  await settled(gw)
  expect(reads).toBeGreaterThan(0) // the first look
  reads = 0
  // Eight answers are $1.28, short of 50 % of $3.
  for (let i = 0; i < 7; i++) {
    await chat(gw)
    await settled(gw)
  }
  expect(reads).toBe(0)
  expect(alerted(50)).toBeUndefined()
  // The tenth reaches $1.60.
  for (let i = 0; i < 2; i++) {
    await chat(gw)
    await settled(gw)
  }
  expect(reads).toBeGreaterThan(0)
  const fifty = await until('the 50 % alert', () => alerted(50))
  expect(fifty.doc.data).toMatchObject({ scope: 'account', account: 'acme', budget_usd: 3 })
  expect(fifty.doc.data.spent_usd).toBeCloseTo(1.6, 6)
})

test('a crossing this gateway could not see coming is found by the sweep REFRESH_MS after, with no more traffic', async () => {
  // $1.60 spent; five answers through the other gateway (no webhook: this one cannot see them)
  // bring it to $2.40, and this gateway's next ($0.16, short of the $0.80 it knew was left before
  // 80 %) crosses it. Nothing is read at that flush; then traffic stops.
  for (let i = 0; i < 5; i++) await chat(other)
  await settled(other)
  reads = 0
  await chat(gw)
  await settled(gw)
  expect(reads).toBe(0)
  clock.advance(REFRESH_MS)
  await gw.deps.alerts.thresholds.sweep(() => clock.now()) // what the timer runs every REFRESH_MS
  const eighty = await until('the 80 % alert', () => alerted(80))
  expect(eighty.doc.data.spent_usd).toBeCloseTo(2.56, 6)
})
