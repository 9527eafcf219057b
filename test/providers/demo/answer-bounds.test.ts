/**
 * The demo's whole answer — text, every tool call's arguments, JSON output, all `n` choices
 * together — stays within `MAX_ANSWER_CHARS` (issue: a 200-byte tool schema asking for
 * `minLength: 1e9` ran the gateway out of memory; `minItems: 1e9` grew it to 12 GB; 200 string
 * properties carried a 100 KB message each). A schema whose smallest value cannot fit is refused
 * with 400 `answer_too_large` naming the schema location; text that cannot fit is cut.
 */
import { describe, expect, test } from 'bun:test'
import Ajv from 'ajv'
import type { ProviderConfig } from '../../../src/config/schema.ts'
import type { ChatCompletion, ChatRequest, FunctionTool } from '../../../src/operations/chat.ts'
import { MAX_ANSWER_CHARS } from '../../../src/providers/demo/bound.ts'
import { createDemoAdapter } from '../../../src/providers/demo/index.ts'
import { GatewayError } from '../../../src/util/errors.ts'
import { assemble, callContext, drain, planItems } from '../helpers.ts'

const provider: ProviderConfig = {
  prefix: 'demo',
  kind: 'demo',
  models: [
    {
      name: 'echo',
      context_window: 1_000_000,
      max_output_tokens: 64_000,
      features: ['streaming', 'tools', 'json_mode', 'json_schema', 'n'],
    },
  ],
}
const demo = createDemoAdapter(provider)

const tool = (name: string, parameters?: Record<string, unknown>): FunctionTool => ({
  type: 'function',
  function: { name, ...(parameters ? { parameters } : {}) },
})
const req = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'echo',
  messages: [{ role: 'user', content }],
  ...extra,
})
const required = (parameters: Record<string, unknown>, extra: Partial<ChatRequest> = {}) =>
  req('hi', { tools: [tool('f', parameters)], tool_choice: 'required', ...extra })
const schemaFormat = (schema: Record<string, unknown>): Partial<ChatRequest> => ({
  response_format: { type: 'json_schema', json_schema: { name: 'out', schema } },
})

/** Characters of the answer, all choices together: content, tool names and arguments. */
function answerChars(res: ChatCompletion): number {
  let n = 0
  for (const c of res.choices) {
    n += c.message.content?.length ?? 0
    for (const call of c.message.tool_calls ?? [])
      n += call.function.name.length + call.function.arguments.length
  }
  return n
}

async function refusal(r: ChatRequest): Promise<GatewayError> {
  const err = await demo.complete(r, callContext(provider)).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(GatewayError)
  // The stream refuses the same way, before any chunk.
  const streamed = await demo.stream(r, callContext(provider)).catch((e: unknown) => e)
  expect(streamed).toBeInstanceOf(GatewayError)
  expect((streamed as GatewayError).message).toBe((err as GatewayError).message)
  return err as GatewayError
}

describe('schemas whose smallest value cannot fit are refused with a 400 naming where', () => {
  test('minLength and minItems (moderate: the old demo built 1 MB and 4 MB)', async () => {
    const long = await refusal(
      required({ type: 'object', properties: { a: { type: 'string', minLength: 1e6 } } }),
    )
    expect(long).toMatchObject({ status: 400, code: 'answer_too_large', type: 'invalid_request_error' })
    expect(long.message).toContain("tool 'f'")
    expect(long.message).toContain('/properties/a')
    expect(long.message).toContain('minLength 1000000')
    const many = await refusal(
      required({ type: 'object', properties: { list: { type: 'array', minItems: 2e6 } } }),
    )
    expect(many.message).toContain('/properties/list')
    expect(many.message).toContain('minItems 2000000')
    const format = await refusal(
      req('hi', schemaFormat({ type: 'object', properties: { s: { type: 'string', minLength: 40_000 } } })),
    )
    expect(format.message).toContain('JSON schema')
    expect(format.message).toContain('/properties/s')
  })

  test('minLength and minItems of 1e9 (the old demo ran out of memory)', async () => {
    for (const schema of [
      { type: 'object', properties: { a: { type: 'string', minLength: 1e9 } } },
      { type: 'object', properties: { a: { type: 'array', minItems: 1e9 } } },
      // What JSON.parse makes of `"minItems": 1e400`.
      { type: 'object', properties: { a: { type: 'array', minItems: Number.POSITIVE_INFINITY } } },
      {
        type: 'object',
        properties: { a: { type: 'array', minItems: 1e4, items: { type: 'array', minItems: 1e4 } } },
      },
    ]) {
      expect((await refusal(required(schema))).code).toBe('answer_too_large')
      expect((await refusal(req('hi', schemaFormat(schema)))).code).toBe('answer_too_large')
    }
  })

  test('a schema that fits one choice may not fit n of them', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string', minLength: 1000 } } }
    const one = await demo.complete(required(schema), callContext(provider))
    expect(one.choices[0]!.message.tool_calls![0]!.function.arguments.length).toBeGreaterThan(1000)
    const err = await refusal(required(schema, { n: 64 }))
    expect(err.message).toContain('64 choices')
  })

  test('a self-referencing schema does not multiply', async () => {
    const props: Record<string, unknown> = {}
    for (let i = 0; i < 50; i++) props[`p${i}`] = { $ref: '#' }
    const err = await refusal(required({ type: 'object', properties: props }))
    expect(err.code).toBe('answer_too_large')
  })

  test('a JSON object in the message larger than the bound is refused, not passed on', async () => {
    const big = JSON.stringify({ data: 'x'.repeat(40_000) })
    const err = await refusal(req(`f ${big}`, { tools: [tool('f')] }))
    expect(err.message).toContain('JSON object')
  })
})

describe('text that cannot fit is cut; the JSON stays valid against the schema', () => {
  test('200 string properties and a 100 KB message: arguments within the bound, each a prefix of the text', async () => {
    const properties: Record<string, unknown> = {}
    for (let i = 0; i < 200; i++) properties[`p${i}`] = { type: 'string' }
    const schema = { type: 'object', properties, required: Object.keys(properties) }
    const text = 'lorem ipsum "dolor" \\ sit\u0001amet \ud83d\ude00 '.repeat(2_500) // ~100 KB
    const res = await demo.complete(
      req(text, { tools: [tool('f', schema)], tool_choice: 'required' }),
      callContext(provider),
    )
    const args = res.choices[0]!.message.tool_calls![0]!.function.arguments
    expect(args.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS)
    expect(args.length).toBeGreaterThan(MAX_ANSWER_CHARS / 2)
    const value = JSON.parse(args) as Record<string, string>
    expect(new Ajv({ strict: false }).compile(schema)(value)).toBe(true)
    for (const s of Object.values(value)) {
      expect(text.startsWith(s)).toBe(true)
      expect(s.length).toBeGreaterThan(0)
    }
  })

  test('n choices share the bound: text, tool calls and JSON', async () => {
    const text = 'word '.repeat(20_000)
    const echo = await demo.complete(req(text, { n: 128 }), callContext(provider))
    expect(answerChars(echo)).toBeLessThanOrEqual(MAX_ANSWER_CHARS)
    expect(echo.choices[0]!.finish_reason).toBe('length')
    const calls = await demo.complete(
      req(text, {
        n: 128,
        tools: [tool('f', { type: 'object', properties: { q: { type: 'string' } } })],
        tool_choice: 'required',
      }),
      callContext(provider),
    )
    expect(answerChars(calls)).toBeLessThanOrEqual(MAX_ANSWER_CHARS)
    expect(JSON.parse(calls.choices[127]!.message.tool_calls![0]!.function.arguments).q).toStartWith(
      'word word',
    )
    const json = await demo.complete(
      req(text, { n: 100, ...schemaFormat({ type: 'object', properties: { q: { type: 'string' } } }) }),
      callContext(provider),
    )
    expect(answerChars(json)).toBeLessThanOrEqual(MAX_ANSWER_CHARS)
    expect(JSON.parse(json.choices[0]!.message.content!).q).toStartWith('Echo: word')
    // Streamed: the same answer.
    const { items } = await drain(planItems(await demo.stream(req(text, { n: 128 }), callContext(provider))))
    let streamed = 0
    for (let i = 0; i < 128; i++) streamed += assemble(items, i).content.length
    expect(streamed).toBe(answerChars(echo))
  })

  test('JSON mode escapes within the bound: the answer is valid JSON, cut with finish_reason length', async () => {
    const res = await demo.complete(
      req('\u0001"'.repeat(30_000), { response_format: { type: 'json_object' } }),
      callContext(provider),
    )
    const content = res.choices[0]!.message.content!
    expect(content.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS)
    expect(JSON.parse(content).echo).toStartWith('Echo: \u0001"')
    expect(res.choices[0]!.finish_reason).toBe('length')
  })

  test('many tool calls share the bound too', async () => {
    const tools = Array.from({ length: 5_000 }, (_, i) => tool(`tool_${i}`))
    const text = tools.map((t) => t.function.name).join(' ')
    const err = await refusal(req(text, { tools }))
    expect(err.message).toContain('5000 tool calls')
  })
})
