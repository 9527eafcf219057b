/** The demo's embeddings: offline, deterministic unit vectors, `dimensions` honoured. */
import { describe, expect, test } from 'bun:test'
import type { ModelConfig, ProviderConfig } from '../../../src/config/schema.ts'
import type { EmbeddingRequest } from '../../../src/operations/embeddings.ts'
import { createDemoEmbeddings, DEMO_DIMENSIONS } from '../../../src/providers/demo/embeddings.ts'
import { callContext } from '../helpers.ts'

const model = (dimensions?: number): ModelConfig => ({
  name: 'embed',
  type: 'embedding',
  context_window: 8192,
  max_output_tokens: 0,
  features: [],
  ...(dimensions === undefined ? {} : { dimensions }),
})
const provider = (dimensions?: number): ProviderConfig => ({
  prefix: 'demo',
  kind: 'demo',
  models: [model(dimensions)],
})
const text = (items: string[], dimensions?: number): EmbeddingRequest => ({
  model: 'embed',
  input: { kind: 'text', items },
  ...(dimensions === undefined ? {} : { dimensions }),
})

async function embed(req: EmbeddingRequest, dimensions?: number) {
  const p = provider(dimensions)
  return createDemoEmbeddings(p).embed(req, callContext(p))
}

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0))
const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0)

describe('demo embeddings', () => {
  test('the same input gets the same unit vector, every time; different inputs different ones', async () => {
    const a = await embed(text(['hello', 'world', 'hello']))
    const b = await embed(text(['hello']))
    expect(a.vectors[0]).toEqual(b.vectors[0]!)
    expect(a.vectors[2]).toEqual(a.vectors[0]!)
    expect(a.vectors[1]).not.toEqual(a.vectors[0]!)
    for (const v of a.vectors) expect(norm(v)).toBeCloseTo(1, 5)
    expect(Math.abs(dot(a.vectors[0]!, a.vectors[1]!))).toBeLessThan(0.3)
  })

  test('values are float32 already, so float and base64 answers carry the same numbers', async () => {
    const { vectors } = await embed(text(['x']))
    expect(vectors[0]!.every((v) => Math.fround(v) === v)).toBe(true)
  })

  test("the model's dimensions by default (256 when its entry gives none); dimensions asked → that many, a normalised prefix", async () => {
    expect((await embed(text(['x']))).vectors[0]).toHaveLength(DEMO_DIMENSIONS)
    expect((await embed(text(['x']), 64)).vectors[0]).toHaveLength(64)
    const full = (await embed(text(['x']))).vectors[0]!
    const short = (await embed(text(['x'], 8))).vectors[0]!
    expect(short).toHaveLength(8)
    expect(norm(short)).toBeCloseTo(1, 5)
    const scale = short[0]! / full[0]!
    for (let i = 0; i < short.length; i++) expect(short[i]!).toBeCloseTo(full[i]! * scale, 5)
  })

  test("dimensions beyond the model's → 400 naming dimensions", () => {
    const calls = createDemoEmbeddings(provider(16))
    expect(() => calls.check(text(['x'], 16), model(16))).not.toThrow()
    expect(() => calls.check(text(['x'], 17), model(16))).toThrow(
      expect.objectContaining({ status: 400, param: 'dimensions' }),
    )
    expect(() => calls.check(text(['x'], DEMO_DIMENSIONS + 1), model())).toThrow(
      expect.objectContaining({ param: 'dimensions' }),
    )
  })

  test('token arrays are embedded too (apart from any text); usage counts their tokens exactly', async () => {
    const result = await embed({ model: 'embed', input: { kind: 'tokens', items: [[1, 2, 3], [4]] } })
    expect(result.vectors).toHaveLength(2)
    expect(result.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 })
    expect(result.vectors[0]).not.toEqual((await embed(text(['1,2,3']))).vectors[0]!)
  })

  test('a request already cancelled is not answered', async () => {
    const p = provider()
    const controller = new AbortController()
    controller.abort()
    await expect(
      createDemoEmbeddings(p).embed(text(['x']), callContext(p, { signal: controller.signal })),
    ).rejects.toThrow()
  })
})
