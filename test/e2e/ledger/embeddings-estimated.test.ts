/**
 * An embeddings answer without token counts (Gemini's: its batch answer has none) is settled to an
 * estimate of its text (DESIGN §11, one ledger: flagged as estimated), and that estimate must not
 * be under what the provider bills — else a token limit admits several times itself. Found: the
 * estimate was four characters a token whatever the text, and text that is not English prose bills
 * far more (the corpus's random CJK: 4,096 characters, 8,504 Gemini tokens, settled as 1,024;
 * digits: 4,096 tokens, settled as 1,024). It is now the input bound admission reserved with (the
 * provider family's calibrated bound, never under the corpus's pinned counts), on the OpenAI
 * surface translated to a gemini provider and on the Gemini surface's own `:batchEmbedContents`.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type FakeUpstream, startFakeGeminiEmbeddings } from '../../support/fake-gemini-embeddings.ts'
import { bearer, PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { syntheticSamples } from '../../support/token-corpus.ts'
import counts from '../../support/token-corpus-counts.json'

const KEY = 'AIza-test'
let up: FakeUpstream<'embeddings'>
let gw: TestGateway
beforeAll(async () => {
  up = await startFakeGeminiEmbeddings({ apiKey: KEY })
  gw = await startGateway({
    doc: testConfigDoc({
      usage: { flush_ms: 20 },
      providers: [
        {
          prefix: 'g',
          kind: 'gemini',
          base_url: up.url,
          api_key: KEY,
          models: [{ name: 'text-embedding-004', type: 'embedding', context_window: 100_000 }],
        },
      ],
      plans: { ...PLANS, metered: { rpm: null, rpd: null, tpm: 1_000_000, models: ['*'] } },
    }),
  })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const samples = syntheticSamples().filter((s) =>
  ['synthetic-random-cjk', 'synthetic-digits', 'synthetic-emoji', 'synthetic-english-prose'].includes(s.name),
)

async function used(key: string): Promise<number> {
  await Bun.sleep(100)
  const u = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
  return u.usage.current_minute.tokens
}

test.each(samples.map((s) => [s.name, s] as const))(
  '%s on /v1/embeddings: told and settled at least what Gemini bills',
  async (name, sample) => {
    const billed = (counts as Record<string, { gemini: number }>)[name]!.gemini
    const { key } = await gw.key(`est-${name.slice(10)}`, 'metered')
    const res = await fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'g/text-embedding-004', input: sample.text }),
    })
    expect(res.status).toBe(200)
    const told = ((await res.json()) as any).usage.prompt_tokens
    expect(told).toBeGreaterThanOrEqual(billed)
    expect(await used(key)).toBe(told)
  },
)

test.each(samples.map((s) => [s.name, s] as const))(
  '%s on :batchEmbedContents: settled at least what Gemini bills',
  async (name, sample) => {
    const billed = (counts as Record<string, { gemini: number }>)[name]!.gemini
    const { key } = await gw.key(`batch-${name.slice(10)}`, 'metered')
    const res = await fetch(`${gw.url}/v1beta/models/g/text-embedding-004:batchEmbedContents`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({
        requests: [{ model: 'models/g/text-embedding-004', content: { parts: [{ text: sample.text }] } }],
      }),
    })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    expect(await used(key)).toBeGreaterThanOrEqual(billed)
  },
)
