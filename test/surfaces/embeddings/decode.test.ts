/**
 * The embeddings surface's own parts: OpenAI's request schema with the field named on every 400,
 * the limits checked before admission, and the operation check (400 naming `model`).
 */
import { estimateShallowMemoryUsageOf } from 'bun:jsc'
import { describe, expect, test } from 'bun:test'
import type { ModelConfig } from '../../../src/config/schema.ts'
import { checkModelServes } from '../../../src/operations/operation.ts'
import { checkEmbeddingLimits } from '../../../src/surfaces/embeddings/limits.ts'
import { decodeEmbeddings } from '../../../src/surfaces/embeddings/validate.ts'
import { GatewayError } from '../../../src/util/errors.ts'

function refusal(body: unknown): GatewayError {
  try {
    decodeEmbeddings(typeof body === 'string' ? body : JSON.stringify(body))
  } catch (err) {
    if (err instanceof GatewayError) return err
    throw err
  }
  throw new Error('expected a 400')
}

const M = 'demo/embed'

describe('decoding OpenAI embeddings bodies', () => {
  test("each of OpenAI's four input shapes becomes the canonical list", () => {
    expect(decodeEmbeddings(JSON.stringify({ model: M, input: 'hi' })).input).toEqual({
      kind: 'text',
      items: ['hi'],
    })
    expect(decodeEmbeddings(JSON.stringify({ model: M, input: ['a', 'b'] })).input).toEqual({
      kind: 'text',
      items: ['a', 'b'],
    })
    expect(decodeEmbeddings(JSON.stringify({ model: M, input: [1, 2, 3] })).input).toEqual({
      kind: 'tokens',
      items: [[1, 2, 3]],
    })
    expect(decodeEmbeddings(JSON.stringify({ model: M, input: [[1], [2, 3]] })).input).toEqual({
      kind: 'tokens',
      items: [[1], [2, 3]],
    })
  })

  test('dimensions, encoding_format and user are kept; other fields are left for the upstream', () => {
    const view = decodeEmbeddings(
      JSON.stringify({
        model: M,
        input: 'x',
        dimensions: 8,
        encoding_format: 'base64',
        user: 'u1',
        extra: true,
      }),
    )
    expect(view.body).toMatchObject({ dimensions: 8, encoding_format: 'base64', user: 'u1', extra: true })
  })

  test('missing or empty input → 400 naming input', () => {
    for (const input of [undefined, '', []]) {
      const err = refusal({ model: M, input })
      expect(err.status).toBe(400)
      expect(err.param).toBe('input')
    }
    expect(refusal({ model: M }).code).toBe('missing_required_parameter')
    expect(refusal({ model: M, input: '' }).message).toContain('empty string')
  })

  test('a bad item is named by its index', () => {
    expect(refusal({ model: M, input: ['a', ''] }).param).toBe('input[1]')
    expect(refusal({ model: M, input: ['a', 2] }).param).toBe('input[1]')
    expect(refusal({ model: M, input: [1, -2] }).param).toBe('input[1]')
    expect(refusal({ model: M, input: [1, 2.5] }).param).toBe('input[1]')
    // Past any vocabulary, and past what a double holds exactly (2 ** 53 + 1 reads as 2 ** 53).
    expect(refusal({ model: M, input: [1, 2 ** 31] }).param).toBe('input[1]')
    expect(refusal('{"model":"demo/embed","input":[[1],[9007199254740993]]}').param).toBe('input[1][0]')
    expect(refusal({ model: M, input: [[1e20]] }).message).toContain('from 0 to 2147483647')
    expect(decodeEmbeddings(JSON.stringify({ model: M, input: [0, 2 ** 31 - 1] })).input.items).toEqual([
      [0, 2 ** 31 - 1],
    ])
    expect(refusal({ model: M, input: [[1], []] }).param).toBe('input[1]')
    expect(refusal({ model: M, input: [[1], [2, 'x']] }).param).toBe('input[1][1]')
    expect(refusal({ model: M, input: [{ text: 'a' }] }).param).toBe('input[0]')
    expect(refusal({ model: M, input: 42 }).param).toBe('input')
    expect(refusal({ model: M, input: null }).param).toBe('input')
  })

  test("more than OpenAI's 2048 inputs → 400 naming input", () => {
    const err = refusal({ model: M, input: Array.from({ length: 2049 }, () => 'x') })
    expect(err.param).toBe('input')
    expect(err.message).toContain('2048')
  })

  test("token arrays up to OpenAI's 300,000 tokens a request are read; past that the body is refused", () => {
    const batch = (arrays: number, each: number) =>
      JSON.stringify({ model: M, input: Array.from({ length: arrays }, () => Array(each).fill(42)) })
    const view = decodeEmbeddings(batch(1000, 300))
    expect(view.input.kind).toBe('tokens')
    expect(view.input.items).toHaveLength(1000)
    const err = refusal(batch(1000, 303))
    expect(err.status).toBe(400)
    expect(err.message).toContain('more than 300000 numbers in arrays')
  })

  test("object members, strings and containers are held to chat's 100,000, token ids or not", () => {
    const members = (n: number) =>
      `{"model":"${M}","input":"hi","x":{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')}}}`
    expect(decodeEmbeddings(members(99_990)).input.items).toEqual(['hi'])
    expect(refusal(members(300_000)).message).toContain(
      'more than 100000 array items and object members besides numbers in arrays',
    )
    // Strings in an array are no token ids: 2,048 inputs at most, and never 300,000 of them.
    expect(refusal(`{"model":"${M}","input":[${'"a",'.repeat(150_000)}"a"]}`).message).toContain(
      'more than 100000 array items',
    )
    expect(refusal(`{"model":"${M}","input":[${'[],'.repeat(150_000)}[]]}`).message).toContain(
      'more than 100000 array items',
    )
  })

  test('model, dimensions, encoding_format and user are named when wrong', () => {
    expect(refusal({ input: 'x' }).param).toBe('model')
    expect(refusal({ model: 7, input: 'x' }).param).toBe('model')
    expect(refusal({ model: M, input: 'x', dimensions: 0 }).param).toBe('dimensions')
    expect(refusal({ model: M, input: 'x', dimensions: 1.5 }).param).toBe('dimensions')
    expect(refusal({ model: M, input: 'x', encoding_format: 'int8' }).param).toBe('encoding_format')
    expect(refusal({ model: M, input: 'x', user: 5 }).param).toBe('user')
  })

  test('a body that is not a JSON object → 400, never a crash', () => {
    for (const text of ['', 'nope', '[1]', 'null', '{"model":']) {
      const err = refusal(text)
      expect(err.status).toBe(400)
    }
  })
})

const EMBED_MODEL: ModelConfig = {
  name: 'embed',
  type: 'embedding',
  context_window: 4,
  dimensions: 16,
  max_output_tokens: 0,
  features: [],
}

describe('limits before admission', () => {
  const check = (body: unknown) => () =>
    checkEmbeddingLimits(decodeEmbeddings(JSON.stringify(body)), EMBED_MODEL)

  test("dimensions beyond the model's vectors → 400 naming dimensions", () => {
    expect(check({ model: M, input: 'x', dimensions: 16 })).not.toThrow()
    expect(check({ model: M, input: 'x', dimensions: 17 })).toThrow(
      expect.objectContaining({ param: 'dimensions' }),
    )
  })

  test('a token array longer than the context window → 400 naming it', () => {
    expect(check({ model: M, input: [1, 2, 3, 4] })).not.toThrow()
    expect(check({ model: M, input: [1, 2, 3, 4, 5] })).toThrow(expect.objectContaining({ param: 'input' }))
    expect(check({ model: M, input: [[1], [1, 2, 3, 4, 5]] })).toThrow(
      expect.objectContaining({ param: 'input[1]' }),
    )
  })
})

describe('the operation a model answers', () => {
  test('a chat model on /v1/embeddings and an embedding model on a chat surface → 400 naming model', () => {
    const chat = { type: undefined }
    expect(() => checkModelServes(chat, 'chat', 'demo/echo')).not.toThrow()
    expect(() => checkModelServes(chat, 'count_tokens', 'demo/echo')).not.toThrow()
    expect(() => checkModelServes(EMBED_MODEL, 'embeddings', M)).not.toThrow()
    for (const [model, operation] of [
      [chat, 'embeddings'],
      [EMBED_MODEL, 'chat'],
      [EMBED_MODEL, 'count_tokens'],
    ] as const) {
      let err: GatewayError | undefined
      try {
        checkModelServes(model, operation, 'x/y')
      } catch (e) {
        err = e as GatewayError
      }
      expect(err).toMatchObject({ status: 400, param: 'model' })
    }
  })
})

describe('memory (DESIGN §16): a batch of short inputs is held once', () => {
  test("each input of 1 KiB or more is a view of the body's text, not a copy", () => {
    const item = 'a'.repeat(4_000)
    const text = `{"model":"demo/embed","input":[${Array.from({ length: 64 }, (_, i) => `"${i}${item}"`).join(',')}]}`
    const view = decodeEmbeddings(text)
    expect(view.input.items).toHaveLength(64)
    expect(view.input.items[5]).toBe(`5${item}`)
    // JavaScriptCore's own estimate: a view is a few bytes, a copy its characters.
    for (const s of view.input.items)
      expect(estimateShallowMemoryUsageOf(s as unknown as object)).toBeLessThan(1024)
  })
})
