/**
 * An answer is counted as it arrives in its model's own tokenizer family (DESIGN §11: output past
 * the allowance is never relayed or billed beyond one chunk; the window never passes the limit):
 * GPT-4 bills `cl100k_base`, which splits Devanagari about 3.5× finer than o200k. Counted in o200k,
 * a Hindi stream from GPT-4 that ignored its cap of 1,200 was cut at 1,200 o200k tokens and billed
 * 4,293 output tokens on TPM 2,000. Against an OpenAI chat upstream billing each choice's text in
 * `cl100k_base` (billing-upstream.ts `tokensOf`, gpt-tokenizer) that never honours the cap.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base'
import { bearer } from '../../support/gateway.ts'
import { startTokensBed, type TokensBed, tokensRequest } from '../../support/tokens-bed.ts'

const TPM = 2_000
/** The cap asked: the hold is its input bound and this, within the TPM. */
const CAP = 1_200
/** The billing upstream's chunk: 10 words, at most ~80 cl100k tokens of this text. */
const CHUNK = 80
const HINDI = 'गेटवे अनुरोध स्वीकार करने से पहले टोकन आरक्षित करता है और बाद में वास्तविक उपयोग के अनुसार निपटान करता है।'

let bed: TokensBed

beforeAll(async () => {
  bed = await startTokensBed(
    { tpm: { rpm: null, rpd: null, models: ['*'], tpm: TPM } },
    {
      model: 'gpt-4',
      // 3,000 words whatever the cap: ~18,000 cl100k tokens, 10 words a chunk, 2 ms apart.
      upstream: {
        ignoreCap: true,
        answerTokens: 3_000,
        words: HINDI.split(' '),
        tokensOf: countTokens,
        chunkDelayMs: 2,
      },
    },
  )
}, 30_000)

afterAll(async () => {
  await bed?.stop()
})

/** The account's minute once its request settled (the usage flush). */
async function settled(key: string): Promise<any> {
  const deadline = performance.now() + 20_000
  for (;;) {
    const u = (await (await fetch(`${bed.gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
    if ((u.usage?.current_minute?.tokens ?? 0) > 0 && (u.usage.current_minute.reserved_tokens ?? 0) === 0)
      return u
    if (performance.now() > deadline) return u
    await Bun.sleep(25)
  }
}

test(`a GPT-4 stream of Hindi that ignores its cap, on TPM ${TPM}: cut within the limit as cl100k bills it`, async () => {
  const { gw, upstream: up } = bed
  const { key } = await gw.key('hindi', 'tpm')
  const from = up.bills.length
  const res = await tokensRequest(gw.url, key, 'chat', true, CAP, 'bill/gpt-4')
  const body = await res.text()
  expect(res.status, body.slice(0, 500)).toBe(200)
  expect(body).toContain('"finish_reason":"length"')
  // The upstream bills when the gateway cancels it.
  const deadline = performance.now() + 10_000
  while (up.bills.length === from && performance.now() < deadline) await Bun.sleep(10)
  const bill = up.bills[from]!
  // Cut at the allowance as the upstream counts: its bill within the cap and one chunk.
  expect(bill.output).toBeLessThanOrEqual(CAP + CHUNK)
  expect(bill.input + bill.output).toBeLessThanOrEqual(TPM + CHUNK)
  // And not cut early: the bound is within ~1.1× of cl100k on this text.
  expect(bill.output).toBeGreaterThan(CAP / 1.5)
  // The window is charged what was relayed (no usage came: the stream was cut), never past the limit.
  const u = await settled(key)
  expect(u.usage.current_minute.tokens).toBeLessThanOrEqual(TPM)
  expect(u.usage.current_minute.tokens).toBeGreaterThanOrEqual(bill.input + bill.output - CHUNK)
})
