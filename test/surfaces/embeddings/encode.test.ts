/** The embeddings answer in OpenAI's list shape (float and base64), and the openai pass-through's body and relay. */

import { describe, expect, test } from 'bun:test'
import type { ProviderConfig } from '../../../src/config/schema.ts'
import { SPLICE_MIN, SplicedText } from '../../../src/json/spliced.ts'
import { textTokenBound } from '../../../src/limits/text-bound.ts'
import { encodeEmbeddings, float32Base64 } from '../../../src/surfaces/embeddings/encode.ts'
import { forwardEmbeddingsBody, relayEmbeddingsJson } from '../../../src/surfaces/embeddings/forward.ts'
import { decodeEmbeddings } from '../../../src/surfaces/embeddings/validate.ts'

/** What the openai SDK does with a base64 embedding (lib/embeddings → toFloat32Array). */
function sdkDecode(text: string): number[] {
  const buf = Buffer.from(text, 'base64')
  return Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4))
}

const RESULT = {
  vectors: [
    [0.6, -0.8],
    [1, 0],
  ],
  usage: { prompt_tokens: 5, total_tokens: 5 },
}

describe('encoding the answer', () => {
  test("float: OpenAI's list shape, in input order, the client's model id, usage with prompt and total tokens", () => {
    const body = JSON.parse(encodeEmbeddings(RESULT, 'demo/embed', 'float'))
    expect(body).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.6, -0.8] },
        { object: 'embedding', index: 1, embedding: [1, 0] },
      ],
      model: 'demo/embed',
      usage: { prompt_tokens: 5, total_tokens: 5 },
    })
  })

  test('base64: little-endian float32 bytes, as the openai SDK decodes them', () => {
    const body = JSON.parse(encodeEmbeddings(RESULT, 'demo/embed', 'base64'))
    const first = body.data[0].embedding
    expect(typeof first).toBe('string')
    expect(Buffer.from(first, 'base64')).toHaveLength(8)
    expect(sdkDecode(first)).toEqual([Math.fround(0.6), Math.fround(-0.8)])
    // Byte order pinned, whatever the machine: 1.0f is 00 00 80 3f.
    expect([...Buffer.from(float32Base64([1]), 'base64')]).toEqual([0, 0, 0x80, 0x3f])
  })
})

const OPENAI: ProviderConfig = {
  prefix: 'oai',
  kind: 'openai',
  api_key: 'sk-upstream-secret',
  models: [
    {
      name: 'te3s',
      upstream_name: 'text-embedding-3-small',
      type: 'embedding',
      context_window: 8192,
      max_output_tokens: 0,
      features: [],
    },
  ],
}

describe('openai pass-through', () => {
  test("the client's body goes up with only model edited: encoding_format as sent, unknown fields and spacing kept", () => {
    const text = '{ "input": ["a", "b"], "model": "oai/te3s", "encoding_format": "base64", "x_vendor": 1 }'
    const up = forwardEmbeddingsBody(decodeEmbeddings(text), text, 'text-embedding-3-small')
    expect(up).toBe(
      '{ "input": ["a", "b"], "model": "text-embedding-3-small", "encoding_format": "base64", "x_vendor": 1 }',
    )
  })

  test('a body with a duplicated key is re-serialised, so the upstream reads what the gateway checked', () => {
    const text = '{"model":"oai/other","input":"x","model":"oai/te3s"}'
    const up = JSON.parse(
      String(forwardEmbeddingsBody(decodeEmbeddings(text), text, 'text-embedding-3-small')),
    )
    expect(up).toEqual({ model: 'text-embedding-3-small', input: 'x' })
  })

  test('a large body goes up as pieces of the client’s text, not joined into a second copy', () => {
    const text = `{"model":"oai/te3s","input":["${'a'.repeat(SPLICE_MIN)}","b"]}`
    const up = forwardEmbeddingsBody(decodeEmbeddings(text), text, 'text-embedding-3-small')
    expect(up).toBeInstanceOf(SplicedText)
    expect(String(up)).toBe(text.replace('"oai/te3s"', '"text-embedding-3-small"'))
  })

  const view = decodeEmbeddings('{"model":"oai/te3s","input":["abcdefgh","b"]}')
  const upstream = (over: Record<string, unknown> = {}) =>
    JSON.stringify({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: 'AACAPw==' },
        { object: 'embedding', index: 1, embedding: 'AAAAAA==' },
      ],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 7, total_tokens: 7 },
      ...over,
    })

  test("the answer comes back with only model edited; the upstream's usage is recorded", () => {
    const text = upstream()
    const { body, usage } = relayEmbeddingsJson(text, 'oai/te3s', view, OPENAI)
    expect(body).toBe(text.replace('"model":"text-embedding-3-small"', '"model":"oai/te3s"'))
    expect(usage).toEqual({ prompt_tokens: 7, total_tokens: 7 })
  })

  test('a compatible server that sends no usage or model: usage estimated from the input, model added', () => {
    const { body, usage } = relayEmbeddingsJson(
      upstream({ usage: undefined, model: undefined }),
      'oai/te3s',
      view,
      OPENAI,
    )
    expect(JSON.parse(body).model).toBe('oai/te3s')
    // Each text by the bound admission reserves with ('any' tokenizer for an unknown model).
    const n = textTokenBound('abcdefgh', 'openai') + textTokenBound('b', 'openai')
    expect(usage).toEqual({ prompt_tokens: n, total_tokens: n, estimated: 'the tokenizer bound' })
  })

  test('not JSON, an error body, or the wrong number of vectors → 502, the key never echoed', () => {
    const bad = [
      'not json sk-upstream-secret',
      JSON.stringify({ error: { message: 'boom sk-upstream-secret', type: 'server_error' } }),
      upstream({ data: [] }),
      '[1]',
    ]
    for (const text of bad) {
      let err: any
      try {
        relayEmbeddingsJson(text, 'oai/te3s', view, OPENAI)
      } catch (e) {
        err = e
      }
      expect(err?.status).toBe(502)
      expect(err.message).not.toContain('sk-upstream-secret')
    }
  })
})
