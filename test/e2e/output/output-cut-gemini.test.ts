/**
 * The Gemini pass-through's cut (DESIGN §11, cut63) against a Gemini upstream that ignores
 * `maxOutputTokens`, reports no `usageMetadata` and paces its events (billing-gemini.ts, each
 * event billed as it is sent): one and four candidates, streamed and JSON (streamed from the
 * upstream and assembled), on TPM 3,000. Every answer ends at its allowance with
 * `finishReason: MAX_TOKENS`; the usage told to the client is what the ledger settled; the
 * upstream bills at most one event a candidate past what was sent it as the cap, and the window
 * never more than its limit and one event a request.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type BillingGemini, startBillingGemini } from '../../support/billing-gemini.ts'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

/** Words (tokens) a candidate in each of the upstream's events: the bound's "one chunk". */
const EVENT = 20
const TPM = 3_000

let up: BillingGemini
let gw: TestGateway
beforeAll(async () => {
  up = await startBillingGemini({
    answerTokens: 3_000,
    ignoreCap: true,
    usage: false,
    perEvent: EVENT,
    eventDelayMs: 30,
  })
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
            { name: 'flash', context_window: 200_000, max_output_tokens: 8192, features: ['streaming', 'n'] },
          ],
        },
      ],
      plans: { ...PLANS, tight: { rpm: null, rpd: null, tpm: TPM, models: ['*'] } },
    }),
  })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

test.each([
  ['stream, one candidate', 'streamGenerateContent?alt=sse', 1],
  ['JSON, one candidate', 'generateContent', 1],
  ['stream, four candidates', 'streamGenerateContent?alt=sse', 4],
  ['JSON, four candidates', 'generateContent', 4],
])(
  '%s: cut at the allowance, told = settled, billed within the limit and one event',
  async (_, method, n) => {
    const { key } = await gw.key(`cut-${method.slice(0, 6)}-${n}`, 'tight')
    const from = up.bills.length
    let told = 0
    let served = 0
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${gw.url}/v1beta/models/g/flash:${method}`, {
        method: 'POST',
        headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({
          contents: [{ role: 'user', parts: [{ text: 'Write a long story.' }] }],
          generationConfig: { candidateCount: n, maxOutputTokens: 300 },
        }),
      })
      const text = await res.text()
      if (res.status === 429) continue
      expect(res.status).toBe(200)
      served++
      expect(text).toContain('"finishReason":"MAX_TOKENS"')
      // Each candidate got far less than the upstream's 3,000 words.
      expect((text.match(/w/g) ?? []).length).toBeLessThanOrEqual(n * 300)
      const usage = [
        ...text.matchAll(/"usageMetadata":\{"promptTokenCount":(\d+),"candidatesTokenCount":(\d+)/g),
      ]
      expect(usage.length).toBe(1)
      told += Number(usage[0]![1]) + Number(usage[0]![2])
    }
    expect(served).toBeGreaterThan(0)
    // Every answer's upstream request ended and billed (a cut one at its cancellation).
    for (let i = 0; i < 100 && up.bills.length - from < served; i++) await Bun.sleep(20)
    const bills = up.bills.slice(from)
    expect(bills.length).toBe(served)
    const seen = JSON.stringify(bills)
    for (const b of bills) expect(b.output, seen).toBeLessThanOrEqual(b.candidates * (b.cap! + EVENT))
    const billed = bills.reduce((t, b) => t + b.input + b.output, 0)
    expect(billed, seen).toBeLessThanOrEqual(TPM + bills.length * n * EVENT)
    await Bun.sleep(100)
    const u = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
    expect(u.usage.current_minute.tokens).toBe(told)
    expect(u.usage.current_minute.tokens).toBeLessThanOrEqual(TPM)
  },
)
