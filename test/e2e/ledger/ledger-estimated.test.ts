/**
 * Settled estimates flagged (DESIGN §11 "One ledger": "an answer without upstream usage is
 * recorded with its settled estimate, flagged as estimated"; issue 41), on every backend.
 *
 * Under a token and money limit, an answer the upstream's usage does not cover is settled by the
 * gateway from what was generated (pipeline/charge.ts `settle`): a stream the client left, an
 * upstream that cut the stream after text, a JSON answer without usage. Its request log row says
 * `estimated: true` and `/v1/usage` counts it in `estimated_requests` (today and per model); an
 * answer with the upstream's usage is not flagged.
 *
 * Two real local upstreams that bill (billing-upstream.ts): one reports usage (model `cut` cuts
 * its stream after 20 tokens), one never does. A stream is held after its first chunk (`gate`)
 * while the client leaves, or until the client has its text before the upstream cuts it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Backend, backends } from '../../support/backends.ts'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { meteredPlan } from '../../support/config-doc.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

const all = backends('ledger-estimated.test.ts')
const TEXT = 'please count these words for the billing upstream which bills one token for each word it sees'

/** Resolves the gate a held stream waits on. */
let release: () => void = () => {}
/** The next upstream stream is held after its first chunk (one-shot). */
let holding = false

async function start(b: Backend): Promise<{ gw: TestGateway; ups: BillingUpstream[] }> {
  const gate = () => {
    if (!holding) return Promise.resolve()
    holding = false
    return new Promise<void>((r) => (release = r))
  }
  const reports = await startBillingUpstream({
    answerTokens: 200,
    gate,
    fault: (model) => (model === 'cut' ? { cut: 20 } : undefined),
  })
  const silent = await startBillingUpstream({ answerTokens: 200, usage: false })
  const model = (name: string) => ({
    name,
    context_window: 128_000,
    max_output_tokens: 4_096,
    features: ['streaming', 'system_messages'],
    pricing: { input: 1, output: 4 },
  })
  const gw = await startGateway({
    backend: await b.fresh(),
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'bill',
          kind: 'openai',
          base_url: reports.url,
          api_key: 'sk-up',
          models: [model('good'), model('cut')],
        },
        { prefix: 'mute', kind: 'openai', base_url: silent.url, api_key: 'sk-up', models: [model('quiet')] },
      ],
      plans: {
        metered: meteredPlan(),
      },
      default_plan: 'metered',
    },
  })
  return { gw, ups: [reports, silent] }
}

function chat(url: string, key: string, model: string, stream: boolean): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content: TEXT }],
      max_completion_tokens: 500,
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
    }),
  })
}

/**
 * The account's one request log row once its outcome is written, and its `/v1/usage` once that
 * shows it (the usage flush writes both), polled for as long as a loaded machine may take.
 */
async function recorded(gw: TestGateway, account: string, key: string): Promise<{ row: any; usage: any }> {
  const deadline = performance.now() + 20_000
  for (;;) {
    const page = (await (
      await fetch(`${gw.url}/admin/v1/requests?account=${account}`, { headers: bearer(ADMIN_TOKEN) })
    ).json()) as any
    const row = page.data?.[0]
    if ((row && row.status !== null) || performance.now() > deadline) {
      const usage = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
      return { row, usage }
    }
    await Bun.sleep(25)
  }
}

/** `/metrics`' count of estimated settlements of a model's chat requests (0: no series). */
async function estimatedMetric(gw: TestGateway, model: string): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text()
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`switchyard_estimated_settlements_total{surface="chat",model="${model}"} `))
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0
}

/** The row is flagged, with the settled estimate's tokens and cost; /v1/usage and /metrics count it. */
async function expectFlagged(gw: TestGateway, r: { row: any; usage: any }, model: string) {
  expect(r.row.estimated).toBe(true)
  expect(r.row.completion_tokens).toBeGreaterThan(0)
  expect(r.row.cost_usd).toBeGreaterThan(0)
  expect(r.usage.usage.today.estimated_requests).toBe(1)
  expect(r.usage.usage.by_model[model].estimated_requests).toBe(1)
  expect(await estimatedMetric(gw, model)).toBe(1)
}

for (const b of all) {
  describe.skipIf(b.skip)(`settled estimates flagged, on ${b.name}`, () => {
    let gw: TestGateway
    let ups: BillingUpstream[] = []
    beforeAll(async () => {
      ;({ gw, ups } = await start(b))
    }, 30_000)
    afterAll(async () => {
      release()
      await gw?.stop()
      for (const u of ups) await u.stop()
    })

    test('an answer with the upstream usage is not flagged', async () => {
      const { key } = await gw.key('counted', 'metered')
      for (const stream of [false, true]) {
        const res = await chat(gw.url, key, 'bill/good', stream)
        expect(res.status).toBe(200)
        await res.text()
      }
      const deadline = performance.now() + 20_000
      let rows: any[] = []
      while (performance.now() < deadline) {
        const page = (await (
          await fetch(`${gw.url}/admin/v1/requests?account=counted`, { headers: bearer(ADMIN_TOKEN) })
        ).json()) as any
        rows = page.data
        if (rows.length === 2 && rows.every((r) => r.status !== null)) break
        await Bun.sleep(25)
      }
      expect(rows.map((r) => [r.status, r.estimated, r.completion_tokens])).toEqual([
        [200, false, 200],
        [200, false, 200],
      ])
      const usage = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
      expect(usage.usage.today.estimated_requests).toBe(0)
      expect(usage.usage.by_model['bill/good'].estimated_requests).toBe(0)
      expect(await estimatedMetric(gw, 'bill/good')).toBe(0)
    })

    test('a stream the client left is recorded with its estimate, flagged', async () => {
      const { key } = await gw.key('left', 'metered')
      holding = true
      const ctl = new AbortController()
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        signal: ctl.signal,
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'bill/good',
          messages: [{ role: 'user', content: TEXT }],
          max_completion_tokens: 500,
          stream: true,
          stream_options: { include_usage: true },
        }),
      })
      expect(res.status).toBe(200)
      const reader = res.body!.getReader()
      let text = ''
      while (!text.includes('"content":"w')) text += new TextDecoder().decode((await reader.read()).value)
      ctl.abort()
      await reader.cancel().catch(() => {})
      const r = await recorded(gw, 'left', key)
      release()
      expect(r.row.status).toBe(499)
      await expectFlagged(gw, r, 'bill/good')
    })

    test('an upstream that cut the stream after text is recorded with its estimate, flagged', async () => {
      const { key } = await gw.key('cut', 'metered')
      // Held after its first text until the client has it: the cut comes after the answer began
      // (a cut before the gateway committed the 200 would be a failure settled to nothing).
      holding = true
      const res = await chat(gw.url, key, 'bill/cut', true)
      expect(res.status).toBe(200)
      const reader = res.body!.getReader()
      let text = ''
      while (!text.includes('"content":"w')) text += new TextDecoder().decode((await reader.read()).value)
      release()
      while (!(await reader.read()).done) {}
      const r = await recorded(gw, 'cut', key)
      await expectFlagged(gw, r, 'bill/cut')
    })

    test('a JSON answer without usage is recorded with its estimate, flagged', async () => {
      const { key } = await gw.key('quiet', 'metered')
      const res = await chat(gw.url, key, 'mute/quiet', false)
      expect(res.status).toBe(200)
      await res.text()
      const r = await recorded(gw, 'quiet', key)
      expect(r.row.status).toBe(200)
      await expectFlagged(gw, r, 'mute/quiet')
    })
  })
}
