/**
 * What Google bills for its built-in tools' results is the ledger's too (DESIGN §11, one ledger):
 * a request with `googleSearch` or `codeExecution` is billed, beside its prompt, the tokens of the
 * tool's results fed back to the model — reported in `usageMetadata.toolUsePromptTokenCount`,
 * apart from `promptTokenCount` and inside `totalTokenCount`, and priced as input. The settlement,
 * `/v1/usage`'s tokens and the budget's spend count them, on the Gemini surface (JSON and stream)
 * and on chat translated to a gemini provider.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type BillingGemini, startBillingGemini } from '../../support/billing-gemini.ts'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

/** The tool results' tokens each request with a built-in tool is billed (a search's pages: tens of thousands). */
const TOOL_USE = 18_000
// USD per 1M tokens: an input token costs 1 micro-dollar, an output token 4.
const PRICING = { input: 1, output: 4, per_call: { web_search: 0.035 } }

let up: BillingGemini
let gw: TestGateway
beforeAll(async () => {
  up = await startBillingGemini({ answerTokens: 50, toolUseTokens: TOOL_USE })
  gw = await startGateway({
    doc: testConfigDoc({
      usage: { flush_ms: 20 },
      providers: [
        {
          prefix: 'g',
          kind: 'gemini',
          base_url: up.url,
          api_key: 'g-key',
          models: [
            {
              name: 'flash',
              context_window: 1_000_000,
              max_output_tokens: 8192,
              features: ['streaming', 'system_messages', 'tools'],
              pricing: PRICING,
            },
          ],
        },
      ],
      plans: {
        ...PLANS,
        metered: { rpm: null, rpd: null, tpm: 1_000_000, budget: { usd: 10, period: 'day' }, models: ['*'] },
      },
    }),
  })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

async function ledger(key: string): Promise<{ tokens: number; spentMicros: number }> {
  // The settlement is written as the answer ends; the usage flush follows within its 20 ms.
  await Bun.sleep(100)
  const u = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
  return { tokens: u.usage.current_minute.tokens, spentMicros: Math.round(u.budget.spent_usd * 1_000_000) }
}

const SEARCH = {
  contents: [{ role: 'user', parts: [{ text: 'What happened in the news today?' }] }],
  tools: [{ googleSearch: {} }],
  generationConfig: { maxOutputTokens: 200 },
}

test.each([
  ['JSON', 'generateContent'],
  ['stream', 'streamGenerateContent?alt=sse'],
])(
  'the Gemini surface, %s: the tool results Google billed are settled, counted and priced as input',
  async (name, method) => {
    const { key } = await gw.key(`tool-use-${name}`, 'metered')
    const res = await fetch(`${gw.url}/v1beta/models/g/flash:${method}`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(SEARCH),
    })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    const bill = up.bills.at(-1)!
    expect(bill.input).toBeGreaterThan(TOOL_USE)
    const { tokens, spentMicros } = await ledger(key)
    expect(tokens).toBe(bill.input + bill.output)
    // The search itself is priced per call beside its tokens ($0.035, 35,000 micro-dollars).
    expect(spentMicros).toBe(bill.input * PRICING.input + bill.output * PRICING.output + 35_000)
  },
)
