/**
 * Gemini embeddings against a local Gemini server speaking `batchEmbedContents` (and refusing
 * unknown fields, mismatched models and batches over 100, as Gemini does).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ProviderConfig } from '../../../src/config/schema.ts'
import type { EmbeddingRequest } from '../../../src/operations/embeddings.ts'
import { createGeminiEmbeddings } from '../../../src/providers/gemini/embeddings.ts'
import { GatewayError } from '../../../src/util/errors.ts'
import { type FakeUpstream, startFakeGeminiEmbeddings } from '../../support/fake-gemini-embeddings.ts'
import { unitVector } from '../../support/fake-openai-embeddings.ts'
import { callContext } from '../helpers.ts'

let fake: FakeUpstream<'embeddings'>
let provider: ProviderConfig
beforeAll(() => {
  fake = startFakeGeminiEmbeddings({ apiKey: 'AIza-embed-secret' })
  provider = {
    prefix: 'gem',
    kind: 'gemini',
    base_url: fake.url,
    api_key: 'AIza-embed-secret',
    models: [
      {
        name: 'embed',
        upstream_name: 'gemini-embedding-001',
        type: 'embedding',
        context_window: 2048,
        max_output_tokens: 0,
        features: [],
      },
    ],
  }
})
afterAll(() => fake.stop())

/** What the gateway makes of Gemini's answer: the full vector cut to `dims`, scaled to unit length. */
function expected(text: string, dims: number): number[] {
  const cut = Array.from(unitVector(text, 3072).subarray(0, dims))
  const norm = Math.sqrt(cut.reduce((s, v) => s + v * v, 0))
  return cut.map((v) => v / norm)
}

const texts = (n: number) => Array.from({ length: n }, (_, i) => `text number ${i}`)
const request = (items: string[], dimensions?: number): EmbeddingRequest => ({
  model: 'gemini-embedding-001',
  input: { kind: 'text', items },
  ...(dimensions === undefined ? {} : { dimensions }),
  user: 'end-user-1',
})

async function refusal(run: () => Promise<unknown>): Promise<GatewayError> {
  try {
    await run()
  } catch (err) {
    if (err instanceof GatewayError) return err
    throw err
  }
  throw new Error('expected a GatewayError')
}

describe('gemini embeddings (batchEmbedContents)', () => {
  const calls = () => createGeminiEmbeddings(provider)

  test('texts → one vector each, in order; dimensions → outputDimensionality, the cut vectors made unit again; the key in a header; user not sent', async () => {
    const before = fake.requests().length
    const result = await calls().embed(request(['alpha', 'beta'], 64), callContext(provider))
    expect(result.vectors).toEqual([expected('alpha', 64), expected('beta', 64)])
    const raw = Array.from(unitVector('alpha', 3072).subarray(0, 64))
    expect(Math.hypot(...raw)).toBeLessThan(0.5)
    expect(Math.hypot(...result.vectors[0]!)).toBeCloseTo(1, 9)
    expect(result.usage.prompt_tokens).toBeGreaterThan(0)
    expect(result.usage.total_tokens).toBe(result.usage.prompt_tokens)
    const sent = fake.requests().slice(before)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents')
    expect(sent[0]!.headers['x-goog-api-key']).toBe('AIza-embed-secret')
    expect(sent[0]!.body).toEqual({
      requests: [
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'alpha' }] },
          outputDimensionality: 64,
        },
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'beta' }] },
          outputDimensionality: 64,
        },
      ],
    })
  })

  test("more than Gemini's 100 per batch: several calls, vectors still in input order", async () => {
    const before = fake.requests().length
    const items = texts(250)
    const result = await calls().embed(request(items, 8), callContext(provider))
    const sent = fake.requests().slice(before)
    expect(sent.map((r) => r.body.requests.length)).toEqual([100, 100, 50])
    expect(result.vectors).toHaveLength(250)
    expect(result.vectors[249]).toEqual(expected('text number 249', 8))
  })

  test('token arrays cannot go to gemini: 400 naming input, before any call', async () => {
    const before = fake.requests().length
    const tokens: EmbeddingRequest = {
      model: 'gemini-embedding-001',
      input: { kind: 'tokens', items: [[1, 2]] },
    }
    expect(() => calls().check(tokens, provider.models[0]!)).toThrow(
      expect.objectContaining({ status: 400, param: 'input' }),
    )
    const err = await refusal(() => calls().embed(tokens, callContext(provider)))
    expect(err).toMatchObject({ status: 400, param: 'input' })
    expect(fake.requests().length).toBe(before)
  })

  test("the upstream's refusals become the gateway's errors (operator's problems as 502), never carrying the key", async () => {
    const tooLong = await refusal(() => calls().embed(request(['x'], 5000), callContext(provider)))
    expect(tooLong.status).toBe(400)
    const unknown = await refusal(() =>
      calls().embed({ ...request(['x']), model: 'gemini-nope' }, callContext(provider)),
    )
    expect(unknown).toMatchObject({ status: 502, code: 'upstream_not_found' })
    const badKey = await refusal(() =>
      createGeminiEmbeddings({ ...provider, api_key: 'AIza-wrong-key' }).embed(
        request(['x']),
        callContext(provider),
      ),
    )
    expect(badKey).toMatchObject({ status: 502, code: 'upstream_auth_failed' })
    for (const err of [tooLong, unknown, badKey]) expect(err.message).not.toContain('AIza-')
  })

  test('an answer with the wrong number of vectors, or not JSON → 502', async () => {
    const answers = [
      JSON.stringify({ embeddings: [{ values: [1] }] }),
      JSON.stringify({ embeddings: [{}, {}] }),
      'garbage',
    ]
    let next = 0
    const odd = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => new Response(answers[next++]!, { headers: { 'content-type': 'application/json' } }),
    })
    try {
      const bad = createGeminiEmbeddings({ ...provider, base_url: `http://127.0.0.1:${odd.port}` })
      for (let i = 0; i < answers.length; i++) {
        const err = await refusal(() => bad.embed(request(['a', 'b']), callContext(provider)))
        expect(err.status).toBe(502)
      }
    } finally {
      await odd.stop(true)
    }
  })
})

describe('the local Gemini server refuses what Gemini refuses', () => {
  const post = (body: unknown, model = 'gemini-embedding-001') =>
    fetch(`${fake.url}/v1beta/models/${model}:batchEmbedContents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'AIza-embed-secret' },
      body: JSON.stringify(body),
    })
  const one = (extra: Record<string, unknown> = {}) => ({
    model: 'models/gemini-embedding-001',
    content: { parts: [{ text: 'hi' }] },
    ...extra,
  })

  test('unknown fields at any depth, a mismatched model, more than 100 requests', async () => {
    const unknown = await post({ requests: [one({ user: 'u' })] })
    expect(unknown.status).toBe(400)
    expect(((await unknown.json()) as any).error.message).toContain('Unknown name "user" at \'requests[0]\'')
    expect((await post({ requests: [one({ content: { parts: [{ text: 'a', x: 1 }] } })] })).status).toBe(400)
    expect((await post({ requests: [one()], encoding_format: 'float' })).status).toBe(400)
    expect((await post({ requests: [one({ model: 'models/text-embedding-004' })] })).status).toBe(400)
    expect((await post({ requests: Array.from({ length: 101 }, () => one()) })).status).toBe(400)
    const ok = await post({ requests: [one({ output_dimensionality: 4, taskType: 'RETRIEVAL_QUERY' })] })
    expect(ok.status).toBe(200)
    expect(((await ok.json()) as any).embeddings[0].values).toHaveLength(4)
  })
})
