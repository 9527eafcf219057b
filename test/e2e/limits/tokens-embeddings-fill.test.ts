/**
 * OpenAI's embedding models are counted by their own encoding (cl100k: text-bound.ts's calibrated
 * bound), not the `any` bound, and without a chat template (OpenAI bills each input's tokens).
 * Audit66c: on `text-embedding-3-small` the bound was 122 tokens for 91 billed; 40 concurrent
 * requests on TPM 2,000 had 10 admitted and 1,274 billed (64 %), a $0.05 budget 3 admitted and
 * $0.0273 spent. Against OpenAI's embeddings wire billing `cl100k_base` counts: the window and the
 * budget now fill past 90 %, never past 100 %.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type FakeUpstream, startFakeOpenAIEmbeddings } from '../../support/fake-openai-embeddings.ts'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const TPM = 2_000
const BUDGET_USD = 0.05
/** $ per 1M input tokens: a token is 100 µ$. */
const PRICE = 100
const TEXT = 'the quick brown fox jumps over the lazy dog '.repeat(10)

let upstream: FakeUpstream<'embeddings'>
let gw: TestGateway
beforeAll(async () => {
  upstream = startFakeOpenAIEmbeddings({ apiKey: 'sk-up' })
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        DEMO_PROVIDER,
        {
          prefix: 'oa',
          kind: 'openai',
          base_url: `${upstream.url}/v1`,
          api_key: 'sk-up',
          models: [
            {
              name: 'text-embedding-3-small',
              type: 'embedding',
              context_window: 8191,
              pricing: { input: PRICE, output: 0 },
            },
          ],
        },
      ],
      plans: {
        tpm: { rpm: null, rpd: null, tpm: TPM, models: ['*'] },
        budget: { rpm: null, rpd: null, budget: { usd: BUDGET_USD, period: 'month' }, models: ['*'] },
      },
      default_plan: 'tpm',
    }),
  })
})
afterAll(async () => {
  await gw.stop()
  upstream.stop()
})

/** 40 concurrent requests (one input, or two), as the audit sent them: the tokens billed for those served. */
async function burst(key: string): Promise<{ served: number; billed: number }> {
  let served = 0
  let billed = 0
  await Promise.all(
    Array.from({ length: 40 }, async (_, i) => {
      const r = await fetch(`${gw.url}/v1/embeddings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'oa/text-embedding-3-small', input: i % 3 ? TEXT : [TEXT, TEXT] }),
      })
      const body = (await r.json()) as { usage?: { total_tokens: number } }
      if (r.status === 200) {
        served++
        billed += body.usage!.total_tokens
      } else expect([429, 402]).toContain(r.status)
    }),
  )
  await gw.deps.recorder.flush()
  return { served, billed }
}

test('40 concurrent embeddings on TPM 2,000 fill the window past 90 %, never past it', async () => {
  const { key } = await gw.key('tpm', 'tpm')
  const { served, billed } = await burst(key)
  expect(served).toBeLessThan(40)
  expect(billed).toBeGreaterThan(0.9 * TPM)
  expect(billed).toBeLessThanOrEqual(TPM)
})

test('a $0.05 budget is spent past 90 % by concurrent embeddings, never past it', async () => {
  const { key } = await gw.key('budget', 'budget')
  const { served, billed } = await burst(key)
  expect(served).toBeLessThan(40)
  const spentMicros = billed * PRICE
  expect(spentMicros).toBeGreaterThan(0.9 * BUDGET_USD * 1e6)
  expect(spentMicros).toBeLessThanOrEqual(BUDGET_USD * 1e6)
})
