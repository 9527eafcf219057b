/**
 * Tight input reservations (DESIGN §11 "Tight, not conservative", issue 41): a request that fits
 * is admitted. Against a billing upstream (one token a word + 8 a message, output as asked), on a
 * GPT-4o model (counted with o200k exactly) and on an unknown model of an OpenAI-compatible
 * provider (the `any` bound): a 45k-token context fits TPM 100k; three 25k contexts at once fit;
 * a key with TPM 400 sends a 100-word prompt; a TPM-3,000 window fills past 90 % with 150-token
 * requests; a $0.01 budget serves at least 75 % of itself in $0.0025 requests. On the byte bound
 * each was refused. The output side is not under test here: every request sets `max_tokens`.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import repoTexts from '../../fixtures/token-corpus-texts.json'
import { startBillingUpstream } from '../../support/billing-upstream.ts'
import { startGateway } from '../../support/gateway.ts'
import { type TokensBed, tokensDoc } from '../../support/tokens-bed.ts'

let bed: TokensBed
beforeAll(async () => {
  const upstream = await startBillingUpstream({ answerTokens: 200 })
  const doc = tokensDoc(upstream.url, {
    tpm100k: { rpm: null, rpd: null, tpm: 100_000, models: ['*'] },
    tpm3k: { rpm: null, rpd: null, tpm: 3_000, models: ['*'] },
    cents: { rpm: null, rpd: null, budget: { usd: 0.01, period: 'month' }, models: ['*'] },
  })
  // The same upstream as OpenAI's gpt-4o-mini, at $10 per 1M tokens in and out.
  const bill = (doc.providers as Array<{ prefix: string; models: unknown[] }>).find(
    (p) => p.prefix === 'bill',
  )!
  bill.models.push({
    name: 'gpt-4o-mini',
    context_window: 128_000,
    max_output_tokens: 4096,
    features: ['streaming', 'system_messages'],
    pricing: { input: 10, output: 10 },
  })
  const gw = await startGateway({ doc })
  bed = {
    upstream,
    gw,
    async stop() {
      await gw.stop()
      await upstream.stop()
    },
  }
})
afterAll(() => bed.stop())

const PROSE = [
  repoTexts['english-prose'],
  repoTexts['english-prose-2'],
  repoTexts['english-prose-3'],
  repoTexts['english-prose-4'],
].join('\n\n')
const WORDS = PROSE.split(/\s+/).filter(Boolean)

/** English prose of at least `tokens` o200k tokens (the corpus' prose, repeated). */
function context(tokens: number): string {
  let text = PROSE
  while (countTokens(text) < tokens) text += `\n\n${PROSE}`
  return text
}

/** `n` words of prose, starting at word `from`: the billing upstream bills one token each. */
const words = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => WORDS[(from + i) % WORDS.length]).join(' ')

function chat(key: string, model: string, content: string, max: number): Promise<Response> {
  return fetch(`${bed.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: max }),
  })
}

async function flush() {
  await bed.gw.deps.recorder.flush()
}

test('a 45,000-token context (about 180 KB) fits TPM 100,000, on GPT-4o and on an unknown model', async () => {
  const text = context(45_000)
  expect(Buffer.byteLength(text)).toBeGreaterThan(150_000)
  for (const model of ['bill/gpt-4o-mini', 'bill/m']) {
    const { key } = await bed.gw.key(`ctx45-${model.slice(5)}`, 'tpm100k')
    const r = await chat(key, model, text, 100)
    expect(r.status).toBe(200)
    await r.text()
    // The reservation was the bound: at least the tokens the upstream billed for the prompt.
    const left = Number(r.headers.get('x-ratelimit-remaining-tokens'))
    expect(100_000 - left).toBeGreaterThan(countTokens(text))
  }
})

test('three 25,000-token contexts at once on TPM 100,000: all three served', async () => {
  const { key } = await bed.gw.key('ctx25', 'tpm100k')
  const text = context(25_000)
  const res = await Promise.all([0, 1, 2].map(() => chat(key, 'bill/gpt-4o-mini', text, 100)))
  await Promise.all(res.map((r) => r.text()))
  expect(res.map((r) => r.status)).toEqual([200, 200, 200])
})

test("a key with its own TPM 400 sends a 100-word prompt, and the upstream's bill stays within it", async () => {
  for (const model of ['bill/gpt-4o-mini', 'bill/m']) {
    const { id, key } = await bed.gw.key(`tpm400-${model.slice(5)}`)
    await bed.gw.deps.store.setKeyLimits(id, {
      rpm: null,
      rpd: null,
      tpm: 400,
      tpd: null,
      budgetMicros: null,
      budgetPeriod: null,
      models: null,
    })
    const before = bed.upstream.billed.tokens
    const r = await chat(key, model, words(100), 50)
    const body = await r.text()
    expect([model, r.status, body.slice(0, 200)]).toEqual([model, 200, expect.any(String)])
    expect(bed.upstream.billed.tokens - before).toBeLessThanOrEqual(400)
  }
})

test('a TPM-3,000 window fills past 90 % with 150-token requests, never past 100 %', async () => {
  const { key } = await bed.gw.key('fill', 'tpm3k')
  const before = bed.upstream.billed.tokens
  let refused: Response | null = null
  for (let i = 0; i < 40 && !refused; i++) {
    // 100 words + 8 for the message + 42 answered = 150 billed.
    const r = await chat(key, 'bill/gpt-4o-mini', words(100, i * 100), 42)
    await r.text()
    if (r.status === 429) refused = r
    else expect(r.status).toBe(200)
    await flush()
  }
  expect(refused).not.toBeNull()
  const billed = bed.upstream.billed.tokens - before
  expect(billed).toBeGreaterThan(2_700)
  expect(billed).toBeLessThanOrEqual(3_000)
})

test('a $0.01 budget serves at least 75 % of itself in $0.0025 requests before refusing', async () => {
  const { key } = await bed.gw.key('budget', 'cents')
  const before = bed.upstream.billed.tokens
  let refused: Response | null = null
  for (let i = 0; i < 10 && !refused; i++) {
    // 200 words + 8 + 42 answered = 250 tokens at $10 / 1M = $0.0025.
    const r = await chat(key, 'bill/gpt-4o-mini', words(200, i * 200), 42)
    await r.text()
    if (r.status === 402) refused = r
    else expect(r.status).toBe(200)
    await flush()
  }
  expect(refused).not.toBeNull()
  const spentMicros = (bed.upstream.billed.tokens - before) * 10
  expect(spentMicros).toBeGreaterThanOrEqual(7_500)
  expect(spentMicros).toBeLessThanOrEqual(10_000)
})
