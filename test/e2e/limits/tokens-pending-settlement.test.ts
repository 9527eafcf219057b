/**
 * A refusal must not be caused by this process's own settlements not yet written (DESIGN §11:
 * "Reserved at admission at the reservation's highest cost, settled to the actual cost"). A
 * request's settlement is written with its log row at the next usage flush; until then its whole
 * reservation (every allowed output token at the output price) still counts. A client that sends
 * its requests one after another, each finished before the next, was refused with a 402 "budget
 * is spent" and a `retry-after` until the period's end (days) while most of the budget was left —
 * or a 429 for the tokens of answers it had already received.
 *
 * Here the flush interval is a minute, so every earlier request's settlement is still pending when
 * the next one is admitted: each reserves about twice what it costs. On every backend.
 */
import { describe, expect, test } from 'bun:test'
import { type Backend, backends } from '../../support/backends.ts'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { bearer, startGateway, type TestGateway } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'
import { tokensDoc, tokensRequest } from '../../support/tokens-bed.ts'

const all = backends('tokens-pending-settlement.test.ts')
let up: BillingUpstream | undefined
let gw: TestGateway | undefined

afterEach(async () => {
  await gw?.stop()
  await up?.stop()
  gw = up = undefined
})

async function start(b: Backend): Promise<{ gw: TestGateway; up: BillingUpstream }> {
  up = await startBillingUpstream({ answerTokens: 100 })
  const doc = tokensDoc(
    up.url,
    {
      // A token in costs 1 micro-dollar, a token out 2.
      budgeted: { rpm: null, rpd: null, budget: { usd: 0.002, period: 'month' }, models: ['*'] },
      tokened: { rpm: null, rpd: null, tpm: 1_000, models: ['*'] },
    },
    { input: 1, output: 2 },
  )
  gw = await startGateway({ doc: { ...doc, usage: { flush_ms: 60_000 } }, backend: await b.fresh() })
  return { gw, up }
}

/** Sends sequential chat requests (100 output tokens asked) until one is refused; the answers, read. */
async function sequential(
  url: string,
  key: string,
  n: number,
): Promise<Array<{ status: number; body: string }>> {
  const out: Array<{ status: number; body: string }> = []
  for (let i = 0; i < n; i++) {
    const r = await tokensRequest(url, key, 'chat', false, 100)
    out.push({ status: r.status, body: await r.text() })
    if (r.status !== 200) break
  }
  return out
}

for (const b of all) {
  describe.skipIf(b.skip)(`settlements waiting for the usage flush, on ${b.name}`, () => {
    test('a budget is not refused for the reservations of requests that already ended', async () => {
      const { gw, up } = await start(b)
      const { key } = await gw.key('seq-budget', 'budgeted')
      // Each costs 25 tokens in + 100 out = 225 micro-dollars and reserves its ~200-byte body plus
      // 100 tokens out (~400): $0.002 pays for 8 of them, while their reservations filled it after 5.
      const answers = await sequential(gw.url, key, 8)
      expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200))
      expect(up.billed.requests).toBe(8)
      // The ninth would take the spend past the budget: that 402 is real.
      const real = await tokensRequest(gw.url, key, 'chat', false, 100)
      expect(real.status).toBe(402)
      await real.text()
      const usage = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
      expect(usage.budget.spent_usd).toBe(0.0018)
      expect(usage.usage.today.cost_usd).toBe(0.0018)
    })

    test('a token limit is not refused for the reservations of requests that already ended', async () => {
      const { gw, up } = await start(b)
      const { key } = await gw.key('seq-tokens', 'tokened')
      // 125 tokens each against a tpm of 1,000; a request needs its input bound (~45 for 17
      // words and a message) plus 100 tokens out (~145) to be admitted: 7 fit, while their
      // reservations filled it after 6.
      const answers = await sequential(gw.url, key, 8)
      expect(answers.map((r) => r.status)).toEqual([...Array(7).fill(200), 429])
      expect(answers[7]!.body).toContain('used 875,')
      expect(up.billed.requests).toBe(7)
      const usage = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
      expect(usage.rate_limits.tokens_minute.used).toBe(875)
    })
  })
}
