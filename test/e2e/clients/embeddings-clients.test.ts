/**
 * Real clients on `/v1/embeddings`, unmodified, through each provider kind against local upstreams
 * speaking each wire: the `openai` SDK (`embeddings.create`: its default base64, and float), the
 * Vercel AI SDK's `embed` / `embedMany` (float) and LangChain's `OpenAIEmbeddings` (its openai
 * client's default, base64), all against the real gateway with a real key. What a client sent is
 * seen through its own `fetch` option (a recorder that passes the call on). The AI SDK and
 * LangChain come from test/clients: without them those tests skip with a printed line.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import OpenAI from 'openai'
import { demoVector } from '../../../src/providers/demo/embeddings.ts'
import { startFakeGeminiEmbeddings } from '../../support/fake-gemini-embeddings.ts'
import {
  type FakeUpstream,
  startFakeOpenAIEmbeddings,
  unitVector,
} from '../../support/fake-openai-embeddings.ts'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const CLIENTS = join(import.meta.dir, '../../clients')

/** A package from test/clients, or null (and a printed line) when it is not installed. */
async function testClient(name: string): Promise<any | null> {
  try {
    return await import(Bun.resolveSync(name, CLIENTS))
  } catch {
    console.log(
      `SKIPPED: the ${name} embeddings tests — ${name} not installed (npm install --prefix test/clients)`,
    )
    return null
  }
}

let openaiUp: FakeUpstream<'embeddings'>
let geminiUp: FakeUpstream<'embeddings'>
let gw: TestGateway
let key: string
/** Every body a client sent to the gateway, in order (through the clients' `fetch` option). */
const sent: any[] = []
const recordingFetch = (input: any, init?: any) => {
  if (typeof init?.body === 'string') sent.push(JSON.parse(init.body))
  return fetch(input, init)
}
beforeAll(async () => {
  openaiUp = startFakeOpenAIEmbeddings({ apiKey: 'sk-upstream-openai' })
  geminiUp = startFakeGeminiEmbeddings({ apiKey: 'AIza-upstream-gemini' })
  const embedding = { type: 'embedding', context_window: 8192 }
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          ...DEMO_PROVIDER,
          models: [...DEMO_PROVIDER.models, { name: 'embed', ...embedding, dimensions: 32 }],
        },
        {
          prefix: 'oai',
          kind: 'openai',
          base_url: `${openaiUp.url}/v1`,
          api_key: 'sk-upstream-openai',
          models: [
            { name: 'small', upstream_name: 'text-embedding-3-small', ...embedding, dimensions: 1536 },
          ],
        },
        {
          prefix: 'gem',
          kind: 'gemini',
          base_url: geminiUp.url,
          api_key: 'AIza-upstream-gemini',
          models: [{ name: 'embed', upstream_name: 'gemini-embedding-001', ...embedding, dimensions: 3072 }],
        },
      ],
    }),
  })
  key = (await gw.key('embedder', 'unlimited')).key
})
afterAll(async () => {
  await gw.stop()
  await openaiUp.stop()
  await geminiUp.stop()
})

/** What each route's upstream makes of a text, at `dims` (the demo: in the gateway itself). */
const EXPECTED: Record<string, { dims: number; vector: (text: string, dims: number) => number[] }> = {
  'demo/embed': { dims: 32, vector: (t, d) => demoVector(t, d) },
  'oai/small': { dims: 1536, vector: (t, d) => Array.from(unitVector(t, d)) },
  'gem/embed': { dims: 3072, vector: (t, d) => geminiVector(t, d) },
}

/** Gemini cuts the full vector to `d` values; the gateway scales them to unit length again. */
function geminiVector(text: string, d: number): number[] {
  const cut = Array.from(unitVector(text, 3072).subarray(0, d))
  if (d === 3072) return cut
  const norm = Math.sqrt(cut.reduce((s, v) => s + v * v, 0))
  return cut.map((v) => v / norm)
}
const MODELS = Object.keys(EXPECTED)

const client = () =>
  new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0, fetch: recordingFetch })

describe('the openai SDK: embeddings.create', () => {
  for (const model of MODELS) {
    const { dims, vector } = EXPECTED[model]!

    test(`${model}: the default (base64 on the wire, decoded by the SDK) gives the upstream's vectors`, async () => {
      const res = await client().embeddings.create({ model, input: ['first text', 'second text'] })
      expect(sent.at(-1).encoding_format).toBe('base64')
      expect(res.object).toBe('list')
      expect(res.model).toBe(model)
      expect(res.data.map((d) => d.index)).toEqual([0, 1])
      expect(res.data[0]!.embedding).toEqual(vector('first text', dims))
      expect(res.data[1]!.embedding).toEqual(vector('second text', dims))
      expect(res.usage.prompt_tokens).toBeGreaterThan(0)
      expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens)
    })

    test(`${model}: float, with dimensions`, async () => {
      const res = await client().embeddings.create({
        model,
        input: 'one text',
        encoding_format: 'float',
        dimensions: 8,
      })
      expect(res.data).toHaveLength(1)
      expect(res.data[0]!.embedding).toEqual(vector('one text', 8))
    })

    test(`${model}: base64 asked for explicitly arrives as a string of float32 bytes`, async () => {
      const res = await client().embeddings.create({ model, input: 'one text', encoding_format: 'base64' })
      const text = res.data[0]!.embedding as unknown as string
      expect(typeof text).toBe('string')
      expect(Buffer.from(text, 'base64')).toHaveLength(dims * 4)
    })
  }

  test('openai pass-through: the body reaches the upstream with only model edited', async () => {
    await client().embeddings.create({ model: 'oai/small', input: 'kept', dimensions: 4, user: 'end-user' })
    expect(openaiUp.lastRequest()!.body).toEqual({
      model: 'text-embedding-3-small',
      input: 'kept',
      dimensions: 4,
      user: 'end-user',
      encoding_format: 'base64',
    })
    expect(openaiUp.lastRequest()!.headers.authorization).toBe('Bearer sk-upstream-openai')
  })

  test('token arrays: through openai and demo; gemini refuses them with a 400 naming input', async () => {
    for (const model of ['oai/small', 'demo/embed']) {
      const res = await client().embeddings.create({
        model,
        input: [[1, 2, 3], [4]],
        encoding_format: 'float',
      })
      expect(res.data).toHaveLength(2)
    }
    const err = await client()
      .embeddings.create({ model: 'gem/embed', input: [1, 2, 3] })
      .catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(err.param).toBe('input')
  })

  // LangChain's Python OpenAIEmbeddings tokenizes by default and sends up to 1,000 token arrays a
  // request; OpenAI takes up to 300,000 tokens in one. 120,000 token ids were refused as "more
  // than 100000 array items" before the model was even read.
  test('a batch of token arrays within OpenAI’s 300,000 tokens a request is embedded, not refused', async () => {
    const input = Array.from({ length: 200 }, (_, i) =>
      Array.from({ length: 600 }, (_, j) => (i * 600 + j) % 100_000),
    )
    for (const model of ['oai/small', 'demo/embed']) {
      const res = await client().embeddings.create({ model, input, encoding_format: 'float' })
      expect(res.data).toHaveLength(200)
      expect(res.data[199]!.index).toBe(199)
      expect(res.usage.prompt_tokens).toBe(120_000)
    }
  })

  // Gemini's batch answer counts no tokens and the demo has no tokenizer: their usage is the
  // gateway's estimate, which looked like a count. The header says which one the client got.
  test('usage says whether the upstream counted it or the gateway estimated it', async () => {
    const seen: Record<string, string | null> = {}
    for (const model of MODELS) {
      const res = await fetch(`${gw.url}/v1/embeddings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, input: ['你好世界', 'two'] }),
      })
      expect(res.status).toBe(200)
      await res.arrayBuffer()
      seen[model] = res.headers.get('x-switchyard-token-count')
    }
    expect(seen).toEqual({
      'demo/embed': 'estimate; 4 characters a token',
      'oai/small': 'upstream',
      'gem/embed': 'estimate; the tokenizer bound',
    })
  })

  test('a missing or empty input, a chat model → 400 naming the field', async () => {
    for (const [body, param] of [
      [{ model: 'demo/embed', input: '' }, 'input'],
      [{ model: 'demo/embed', input: [] }, 'input'],
      [{ model: 'demo/echo', input: 'x' }, 'model'],
    ] as const) {
      const err = await client()
        .embeddings.create(body as any)
        .catch((e) => e)
      expect(err.status).toBe(400)
      expect(err.param).toBe(param)
    }
  })
})

describe("the AI SDK's embed and embedMany", () => {
  for (const model of MODELS) {
    const { dims, vector } = EXPECTED[model]!
    test(`${model}`, async () => {
      const ai = await testClient('ai')
      const sdk = await testClient('@ai-sdk/openai')
      if (!ai || !sdk) return
      const provider = sdk.createOpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, fetch: recordingFetch })
      const one = await ai.embed({
        model: provider.embedding(model),
        value: 'sunny day at the beach',
        maxRetries: 0,
      })
      expect(one.embedding).toEqual(vector('sunny day at the beach', dims))
      expect(one.usage.tokens).toBeGreaterThan(0)
      const values = ['rainy afternoon', 'snowy night', 'windy morning']
      const many = await ai.embedMany({ model: provider.embedding(model), values, maxRetries: 0 })
      expect(many.embeddings).toEqual(values.map((v) => vector(v, dims)))
      expect(sent.at(-1).encoding_format).toBe('float')
    })
  }
})

describe("the AI SDK's embedMany at OpenAI's batch size", () => {
  test('oai/small: 2,100 values (one call of 2,048 as float, ~50 MB, then 52) come back whole', async () => {
    const ai = await testClient('ai')
    const sdk = await testClient('@ai-sdk/openai')
    if (!ai || !sdk) return
    const provider = sdk.createOpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, fetch: recordingFetch })
    const values = Array.from({ length: 2_100 }, (_, i) => `value ${i}`)
    // The answer to 2,048 float vectors of 1,536 is past the 32 MiB default cap: it was a 502.
    const many = await ai.embedMany({ model: provider.embedding('oai/small'), values, maxRetries: 0 })
    expect(many.embeddings).toHaveLength(2_100)
    expect(many.embeddings[2_099]).toEqual(Array.from(unitVector('value 2099', 1536)))
  }, 60_000)
})

describe("LangChain's OpenAIEmbeddings", () => {
  for (const model of MODELS) {
    const { dims, vector } = EXPECTED[model]!
    test(`${model}: embedQuery and embedDocuments`, async () => {
      const lc = await testClient('@langchain/openai')
      if (!lc) return
      const embeddings = new lc.OpenAIEmbeddings({
        model,
        apiKey: key,
        configuration: { baseURL: `${gw.url}/v1`, fetch: recordingFetch },
        maxRetries: 0,
      })
      expect(await embeddings.embedQuery('what is a gateway')).toEqual(vector('what is a gateway', dims))
      const docs = ['a gateway routes requests', 'a switchyard sorts trains']
      expect(await embeddings.embedDocuments(docs)).toEqual(docs.map((d) => vector(d, dims)))
      expect(sent.at(-1).encoding_format).toBe('base64')
    })
  }
})
