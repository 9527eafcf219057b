/**
 * Hidden reasoning under a token or money limit (DESIGN §11: the tokens of admitted requests never
 * pass the limit "whatever the request or the upstream does"; audit66c). A reasoning model thinks
 * tokens it never streams, billed as output within the cap it is sent (`max_completion_tokens`
 * bounds reasoning and visible output together), so the running count cannot see them and an
 * uncapped hold cannot grow into them: an uncapped request to a model that lists `reasoning` holds,
 * from admission, the cap it is sent — never room promised to several requests at once. A model
 * without `reasoning` still grows from a slice (issue 41: uncapped answers run side by side).
 * On SQLite and on two replicas on PostgreSQL + Redis, against an upstream that bills like the
 * real one (billing-upstream.ts `reasoningFor`: 15,000 hidden tokens, then 50 shown).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type BackendUrls, backends } from '../../support/backends.ts'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { bearer, startGateway, type TestGateway } from '../../support/gateway.ts'
import { tokensDoc } from '../../support/tokens-bed.ts'

const MODEL_MAX = 32_000
const TPM = 20_000
/** USD per 1M tokens: a token costs that many micro-dollars. */
const PRICE = { input: 1, output: 4 }
/** The budget: $0.10, 100,000 micro-dollars — one reasoning answer's 15,050 output tokens cost 60,200. */
const BUDGET_MICROS = 100_000
const REASONING = 15_000
const TEXT = 'think hard about this question before you answer it'

/** What each stream awaits after its first chunk: answers stay in flight (held) until it resolves. */
let inFlight: Promise<void> = Promise.resolve()

/** Two models at a 32,000-token maximum: `bill/r` lists `reasoning` and thinks hidden; `bill/m` does not. */
async function setup(urls: BackendUrls): Promise<{ up: BillingUpstream; gws: TestGateway[] }> {
  const up = await startBillingUpstream({
    answerFor: (model) => (model === 'r' ? 50 : 500),
    reasoningFor: (model) => (model === 'r' ? REASONING : undefined),
    defaultMax: MODEL_MAX,
    gate: () => inFlight,
  })
  const open = { rpm: null, rpd: null, models: ['*'] }
  const base = tokensDoc(
    up.url,
    {
      tight: { ...open, tpm: TPM },
      money: { ...open, budget: { usd: BUDGET_MICROS / 1e6, period: 'month' } },
    },
    PRICE,
  )
  const providers = (base.providers as Array<Record<string, any>>).map((p) => {
    if (p.prefix !== 'bill') return p
    const m = { ...p.models[0], max_output_tokens: MODEL_MAX }
    return { ...p, models: [m, { ...m, name: 'r', features: [...m.features, 'reasoning'] }] }
  })
  const doc = { ...base, providers }
  // Two replicas on a shared store (each its own connections, limiter and recorder); SQLite: one.
  const gws = urls.databaseUrl
    ? await Promise.all([startGateway({ doc, backend: urls }), startGateway({ doc, backend: urls })])
    : [await startGateway({ doc })]
  return { up, gws }
}

/** An uncapped stream on `surface`, with the usage chunk on chat. */
function ask(gw: TestGateway, key: string, surface: 'chat' | 'responses', model: string): Promise<Response> {
  const [path, body] =
    surface === 'chat'
      ? [
          '/v1/chat/completions',
          {
            model,
            messages: [{ role: 'user', content: TEXT }],
            stream: true,
            stream_options: { include_usage: true },
          },
        ]
      : ['/v1/responses', { model, input: TEXT, stream: true }]
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

/** The account's usage once `done` holds (the usage flush settles ended requests). */
async function usageWhen(gw: TestGateway, key: string, done: (u: any) => boolean): Promise<any> {
  const deadline = performance.now() + 20_000
  for (;;) {
    const u = await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()
    if (done(u) || performance.now() > deadline) return u
    await Bun.sleep(25)
  }
}

const backendsHere = backends('tokens-hidden-reasoning.test.ts').filter((b) => b.name !== 'postgres')

for (const backend of backendsHere) {
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    let up: BillingUpstream
    let gws: TestGateway[]
    beforeAll(async () => {
      ;({ up, gws } = await setup(await backend.fresh()))
    }, 60_000)
    afterAll(async () => {
      for (const g of gws ?? []) await g.stop()
      await up?.stop()
    })
    const gw = (i: number) => gws[i % gws.length]!

    /**
     * Three uncapped streams at once to `model` (chat, Responses, chat) on `key`, across the
     * replicas, each held in flight after its first chunk until all three are answered or refused:
     * admitted (or not) beside one another whatever the load, none settled before another's turn.
     */
    async function three(key: string, model: string) {
      const from = up.bills.length
      let release = () => {}
      inFlight = new Promise((r) => {
        release = r
      })
      // Never a hang: should the gateway wait on the holds, the answers go on after 10 s.
      const timer = setTimeout(release, 10_000)
      const res = await Promise.all(
        (['chat', 'responses', 'chat'] as const).map((s, i) => ask(gw(i), key, s, model)),
      )
      release()
      clearTimeout(timer)
      const texts = await Promise.all(res.map((r) => r.text()))
      const bills = up.bills.slice(from)
      return {
        statuses: res.map((r) => r.status),
        texts,
        bills,
        tokens: bills.reduce((s, b) => s + b.input + b.output, 0),
        micros: bills.reduce((s, b) => s + b.input * PRICE.input + b.output * PRICE.output, 0),
      }
    }

    test(`three uncapped streams to a reasoning model on TPM ${TPM}: the upstream never bills past it, the window settles to the bill`, async () => {
      const { key } = await gw(0).key('tight-r', 'tight')
      const r = await three(key, 'bill/r')
      for (const [i, s] of r.statuses.entries()) expect([200, 429], r.texts[i]).toContain(s)
      // Each holds at most half the window (output-growth.ts unseenCeiling), so a second runs beside
      // the first: holding the whole window, one uncapped turn on a model whose maximum passes the
      // TPM refused every other request of the account until it settled (audit66e: a second Codex
      // session failed its turn after five 429s).
      expect(r.statuses.filter((s) => s === 200).length, r.texts.join('\n')).toBeGreaterThanOrEqual(2)
      // Before: each was sent what it held plus all the room left (19,966 / 15,836 / 11,706), and
      // the three billed 41,842 (209 % of TPM).
      expect(r.tokens).toBeLessThanOrEqual(TPM)
      // The rule itself: the caps sent upstream, with the inputs, fit the limit together — none was
      // promised room another was also promised.
      expect(r.bills.reduce((s, b) => s + b.input + b.cap!, 0)).toBeLessThanOrEqual(TPM)
      const u = await usageWhen(gw(0), key, (u) => u.usage?.current_minute?.tokens === r.tokens)
      expect(u.usage.current_minute.tokens).toBe(r.tokens)
    })

    test('three uncapped streams to a reasoning model on a $0.10 budget: the upstream never bills past it', async () => {
      const { key } = await gw(0).key('money-r', 'money')
      const r = await three(key, 'bill/r')
      for (const [i, s] of r.statuses.entries()) expect([200, 402], r.texts[i]).toContain(s)
      expect(r.statuses.filter((s) => s === 200).length, r.texts.join('\n')).toBeGreaterThanOrEqual(2)
      expect(r.micros).toBeLessThanOrEqual(BUDGET_MICROS)
      const promised = r.bills.reduce((s, b) => s + b.input * PRICE.input + b.cap! * PRICE.output, 0)
      expect(promised).toBeLessThanOrEqual(BUDGET_MICROS)
      const u = await usageWhen(gw(0), key, (u) => Math.round((u.budget?.spent_usd ?? 0) * 1e6) === r.micros)
      expect(Math.round(u.budget.spent_usd * 1e6)).toBe(r.micros)
    })

    test(`three uncapped streams to a model without reasoning on TPM ${TPM} still grow from a slice: all answered in full`, async () => {
      const { key } = await gw(0).key('tight-m', 'tight')
      const r = await three(key, 'bill/m')
      expect(r.statuses).toEqual([200, 200, 200])
      expect(r.bills.map((b) => b.output)).toEqual([500, 500, 500])
      expect(r.tokens).toBeLessThanOrEqual(TPM)
    })
  })
}
