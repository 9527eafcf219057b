import { describe, expect, test } from 'bun:test'
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base'
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base'
import {
  FILE_TOKENS,
  IMAGE_TOKENS,
  inputTokenBound,
  SERVER_TOOL_TOKENS,
  TOOL_PROMPT_TOKENS,
} from '../../src/limits/estimate-tokens.ts'
import { reportedSamples, syntheticSamples } from '../support/token-corpus.ts'
import pinned from '../support/token-corpus-counts.json'

const bound = (body: string) => inputTokenBound(Buffer.byteLength(body), JSON.parse(body)).tokens
const counts = pinned as Record<string, Record<string, number>>
/** Template tokens around one message's text, for any model (OpenAI: 3 per message + 3). */
const TEMPLATE = 8

describe('the input bound is conservative on the corpus', () => {
  test.each(reportedSamples().map((s) => [s.name, s] as const))(
    '%s: at least what the provider reported',
    (_, s) => {
      expect(bound(s.body)).toBeGreaterThanOrEqual(s.tokens)
    },
  )

  test('the pinned counts are of these very samples (the generator did not drift)', () => {
    const samples = syntheticSamples()
    expect(Object.keys(counts).sort()).toEqual(samples.map((s) => s.name).sort())
    for (const s of samples) {
      expect(o200k(s.text)).toBe(counts[s.name]!.o200k!)
      expect(cl100k(s.text)).toBe(counts[s.name]!.cl100k!)
    }
  })

  test.each(syntheticSamples().map((s) => [s.name, s] as const))(
    '%s: at least every tokenizer’s count plus the template',
    (name, s) => {
      const most = Math.max(...Object.values(counts[name]!))
      expect(bound(s.body)).toBeGreaterThanOrEqual(most + TEMPLATE)
    },
  )

  test('no divisor of the bytes would do: some text costs one token per byte', () => {
    // Random digits on Gemini's and Llama's SentencePiece (digits split one by one) and spaced
    // digits on every tokenizer: a bytes/2 estimate would reserve half of what is billed.
    for (const name of ['synthetic-digits', 'synthetic-digits-spaced']) {
      const s = syntheticSamples().find((x) => x.name === name)!
      const bytes = Buffer.byteLength(s.text)
      expect(Math.max(...Object.values(counts[name]!))).toBeGreaterThanOrEqual(bytes - 1)
    }
  })

  test('an o200k count would not do: Anthropic’s hidden tool prompt and other tokenizers exceed it', () => {
    const weather = reportedSamples().find((s) => s.name === 'anthropic-guide-weather-tool')!
    expect(o200k(weather.body)).toBeLessThan(weather.tokens)
    const hindi = counts['synthetic-hindi']!
    expect(hindi.claude!).toBeGreaterThan(3 * hindi.o200k!)
  })
})

describe('what the bytes cannot show is allowed for', () => {
  const chat = (extra: Record<string, unknown>, content: unknown = 'hi') =>
    JSON.stringify({ model: 'p/m', messages: [{ role: 'user', content }], ...extra })

  test('a plain body is its byte length', () => {
    const body = chat({})
    expect(inputTokenBound(Buffer.byteLength(body), JSON.parse(body))).toEqual({
      tokens: Buffer.byteLength(body),
      bytes: Buffer.byteLength(body),
      images: 0,
      files: 0,
      serverTools: 0,
      toolPrompt: false,
    })
  })

  test('each image part on every surface', () => {
    const parts = [
      { type: 'image_url', image_url: { url: 'https://example.invalid/a.png' } },
      { type: 'image', source: { type: 'url', url: 'https://example.invalid/b.png' } },
      { type: 'input_image', image_url: 'https://example.invalid/c.png' },
    ]
    const body = chat({}, parts)
    const b = inputTokenBound(Buffer.byteLength(body), JSON.parse(body))
    expect(b.images).toBe(3)
    expect(b.tokens).toBe(Buffer.byteLength(body) + 3 * IMAGE_TOKENS)
  })

  test('images inside tool results are found too (any depth)', () => {
    const body = JSON.stringify({
      model: 'p/m',
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't',
              content: [{ type: 'image', source: { type: 'base64' } }],
            },
          ],
        },
      ],
    })
    expect(inputTokenBound(Buffer.byteLength(body), JSON.parse(body)).images).toBe(1)
  })

  test('files and documents', () => {
    const body = chat({}, [
      { type: 'file', file: { file_id: 'f' } },
      { type: 'document', source: { type: 'url', url: 'https://example.invalid/x.pdf' } },
      { type: 'input_file', file_id: 'g' },
    ])
    const b = inputTokenBound(Buffer.byteLength(body), JSON.parse(body))
    expect(b.files).toBe(3)
    expect(b.tokens).toBe(Buffer.byteLength(body) + 3 * FILE_TOKENS)
  })

  test('client tools add the hidden tool-use prompt once; provider-run tools add their own', () => {
    const tools = [
      { type: 'function', function: { name: 'a', parameters: { type: 'object' } } },
      { name: 'b', input_schema: { type: 'object' } },
      { type: 'web_search_20250305', name: 'web_search' },
      { type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 768 },
    ]
    const body = chat({ tools })
    const b = inputTokenBound(Buffer.byteLength(body), JSON.parse(body))
    expect(b).toMatchObject({ toolPrompt: true, serverTools: 2 })
    expect(b.tokens).toBe(Buffer.byteLength(body) + TOOL_PROMPT_TOKENS + 2 * SERVER_TOOL_TOKENS)
  })

  test('legacy functions and JSON-schema outputs on each surface add the hidden prompt', () => {
    for (const extra of [
      { functions: [{ name: 'f', parameters: { type: 'object' } }] },
      { response_format: { type: 'json_schema', json_schema: { name: 's', schema: {} } } },
      { text: { format: { type: 'json_schema', name: 's', schema: {} } } },
      { output_format: { type: 'json_schema', schema: {} } },
      { output_config: { format: { type: 'json_schema', schema: {} } } },
    ]) {
      const body = chat(extra)
      expect(inputTokenBound(Buffer.byteLength(body), JSON.parse(body)).tokens).toBe(
        Buffer.byteLength(body) + TOOL_PROMPT_TOKENS,
      )
    }
    const jsonMode = chat({ response_format: { type: 'json_object' } })
    expect(inputTokenBound(Buffer.byteLength(jsonMode), JSON.parse(jsonMode)).toolPrompt).toBe(false)
  })

  test('odd shapes do not throw: a non-object body, null tools, tools that are not objects', () => {
    expect(inputTokenBound(4, 'text').tokens).toBe(4)
    expect(inputTokenBound(4, null).tokens).toBe(4)
    expect(inputTokenBound(10, { tools: [null, 3, 'x'] }).serverTools).toBe(0)
    expect(inputTokenBound(10, { tools: null, messages: [null, [[]]] }).tokens).toBe(10)
  })

  test('a hostile body is walked once per node: 100 levels of nesting, 50k empty objects', () => {
    let deep: unknown = {}
    for (let i = 0; i < 100; i++) deep = [deep]
    expect(inputTokenBound(300, { messages: deep }).tokens).toBe(300)
    const wide = { messages: [{ role: 'user', content: Array.from({ length: 50_000 }, () => ({})) }] }
    expect(inputTokenBound(200_000, wide).tokens).toBe(200_000)
  })
})
