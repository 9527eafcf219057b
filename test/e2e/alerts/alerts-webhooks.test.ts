/**
 * Signed webhook alerts (DESIGN §15) through the real gateway, a fault upstream and a webhook
 * receiver on real sockets: `budget.threshold` at 50 and 80 % of an account's budget, once each;
 * `circuit.opened` when a model's circuit opens; a 500 answer retried until a 2xx; the signature
 * checked with the README's recipe; `GET /admin/v1/deliveries` listing them; and a restart while
 * a delivery is being retried loses none (the queue is in the store).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { type FaultUpstream, startFaultUpstream } from '../../support/fault-upstream.ts'
import {
  ADMIN_TOKEN,
  bearer,
  PLANS,
  startGateway,
  type TestGateway,
  tempDir,
  testConfigDoc,
} from '../../support/gateway.ts'
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../support/webhook-receiver.ts'

const SECRET = 'whsec-test-0123456789abcdef'
const dir = tempDir('switchyard-alerts-')
const dbPath = join(dir, 'switchyard.db')
let up: FaultUpstream
let hook: WebhookReceiver
let gw: TestGateway
let key: string

const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 8192,
  max_output_tokens: 16,
  features: ['system_messages'],
  ...extra,
})

function doc() {
  return testConfigDoc({
    providers: [
      {
        prefix: 'up',
        kind: 'openai',
        base_url: `${up.url}/v1`,
        api_key: 'sk-up-0001',
        retry: { attempts: 0 },
        circuit: { failures: 2, cooldown_s: 60 },
        // $0.01 an output token: an answer of 12 words costs $0.12 of the $1 budget.
        models: [model('m1', { pricing: { input: 0, output: 10_000 } }), model('m2'), model('m3')],
      },
    ],
    plans: {
      ...PLANS,
      metered: { rpm: null, rpd: null, budget: { usd: 1, period: 'month' }, models: ['*'] },
    },
    usage: { flush_ms: 20 },
    alerts: {
      webhooks: [{ url: hook.url, secret: SECRET, events: ['budget.threshold', 'circuit.opened'] }],
      backoff_ms: 50,
      max_backoff_ms: 100,
      poll_ms: 20,
    },
  })
}

const chat = (model: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  })

const deliveries = async (g: TestGateway) => {
  const res = await fetch(`${g.url}/admin/v1/deliveries?limit=200`, { headers: bearer(ADMIN_TOKEN) })
  expect(res.status).toBe(200)
  return ((await res.json()) as any).data as any[]
}

async function until<T>(what: string, f: () => T | Promise<T>, ms = 15_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v) return v as NonNullable<T>
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

beforeAll(async () => {
  up = await startFaultUpstream()
  hook = startWebhookReceiver()
  gw = await startGateway({ doc: doc(), dbPath })
  key = (await gw.key('acme', 'metered')).key
})
afterAll(async () => {
  await gw?.stop()
  await hook?.stop()
  await up?.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('budget.threshold at 50 and 80 % (once each), signed, the first answer 500 retried, listed', async () => {
  hook.fail(1)
  // Until the budget refuses: each answer costs $0.12 to $0.16 (its 12 words as the upstream
  // bills them, or its 16-token allowance when the gateway's count cuts it there), so the refusal
  // comes with more than $0.84 spent, and the admission never lets it reach $1.
  let answered = 0
  for (let i = 0; i < 12; i++) {
    const res = await chat('up/m1')
    await res.arrayBuffer()
    if (res.status === 402) break
    expect(res.status).toBe(200)
    answered++
  }
  expect(answered).toBeGreaterThanOrEqual(6)
  expect(answered).toBeLessThan(12)
  // More than 80 % of $1 spent: 50 and 80 % crossed, 100 % not.
  const delivered = (t: number) =>
    hook.got.find(
      (g) => g.event === 'budget.threshold' && g.doc.data.threshold_percent === t && g.answered === 200,
    )
  const fifty = await until('the 50 % alert', () => delivered(50))
  const eighty = await until('the 80 % alert', () => delivered(80))
  expect(fifty.doc.data).toMatchObject({ scope: 'account', account: 'acme', period: 'month', budget_usd: 1 })
  expect(eighty.doc.data.spent_usd).toBeGreaterThanOrEqual(0.8)
  for (const g of hook.got) expect(verify(SECRET, g.signature, g.body)).toBe(true)
  expect(verify('another-secret-0123456789', fifty.signature, fifty.body)).toBe(false)
  // The 500 was answered to the first delivery, which came again with the same id.
  const refused = hook.got.find((g) => g.answered === 500)!
  expect(hook.got.filter((g) => g.id === refused.id && g.answered === 200)).toHaveLength(1)
  expect(hook.got.some((g) => g.doc.data?.threshold_percent === 100)).toBe(false)
  // Once per period each, whatever more requests come.
  const res = await chat('up/m1')
  await res.arrayBuffer()
  await Bun.sleep(200)
  const ids = new Set(
    hook.got.filter((g) => g.event === 'budget.threshold').map((g) => g.doc.data.threshold_percent),
  )
  expect([...ids].sort()).toEqual([50, 80])
  const rows: any[] = await until('the deliveries delivered', async () => {
    const list = await deliveries(gw)
    return list.filter((d) => d.event === 'budget.threshold').every((d) => d.state === 'delivered')
      ? list
      : null
  })
  const retried = rows.find((d) => d.event_id === refused.id)
  expect(retried).toMatchObject({ url: hook.url, state: 'delivered', attempts: 2, last_status: 200 })
  expect(retried.payload.id).toBe(refused.id)
})

test('circuit.opened when a model fails until its circuit opens', async () => {
  up.script({ model: 'm2' }, 'unavailable')
  for (let i = 0; i < 2; i++) {
    const res = await chat('up/m2')
    expect(res.status).toBeGreaterThanOrEqual(500)
    await res.arrayBuffer()
  }
  const opened = await until('circuit.opened', () => hook.got.find((g) => g.event === 'circuit.opened'))
  expect(opened.doc.data).toMatchObject({ provider: 'up', key: '#0', model: 'up/m2' })
  expect(verify(SECRET, opened.signature, opened.body)).toBe(true)
})

test('a restart while a delivery is being retried loses none', async () => {
  hook.down = true
  up.script({ model: 'm3' }, 'unavailable')
  for (let i = 0; i < 2; i++) await (await chat('up/m3')).arrayBuffer()
  const pending = await until('a delivery tried and refused', async () =>
    (await deliveries(gw)).find(
      (d) => d.event === 'circuit.opened' && d.attempts >= 1 && d.payload.data.model === 'up/m3',
    ),
  )
  expect(pending.state).toBe('pending')
  await gw.stop()
  hook.down = false
  gw = await startGateway({ doc: doc(), dbPath })
  await until('the delivery after the restart', () =>
    hook.got.find((g) => g.id === pending.event_id && g.answered === 200),
  )
  // The receiver's 200 reaches the queue's record a moment after the receiver saw the delivery.
  const after = await until('the delivery recorded as delivered', async () =>
    (await deliveries(gw)).find((d) => d.event_id === pending.event_id && d.state === 'delivered'),
  )
  expect(after.state).toBe('delivered')
  expect(after.attempts).toBeGreaterThanOrEqual(2)
  expect((await deliveries(gw)).every((d) => d.state === 'delivered')).toBe(true)
})
