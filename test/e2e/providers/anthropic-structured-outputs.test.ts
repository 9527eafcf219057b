/**
 * Structured outputs to an anthropic model on the translated routes: chat's `response_format`
 * json_schema and Responses' `text.format` reach Anthropic as `output_config.format` (the schema
 * alone), and the clients' parsers read the JSON that comes back — the openai SDK's
 * `chat.completions.parse`, `.stream()` and `responses.parse`, the AI SDK's `generateObject` on
 * `openai.chat(...)` and `openai.responses(...)`. A schema-less JSON mode (json_object) Anthropic
 * does not have is refused by name.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { BadRequestError } from 'openai'
import { type ResponsesBed, startResponsesBed } from '../../support/responses-bed.ts'

const MODEL = 'anthropic/structured'
const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer' } },
  required: ['city', 'days'],
  additionalProperties: false,
}
const ANSWER = { city: 'Paris', days: 3 }
const FORMAT = { type: 'json_schema', schema: SCHEMA }

let bed: ResponsesBed
beforeAll(async () => {
  bed = await startResponsesBed()
})
afterAll(() => bed.stop())

/** The body the fake Anthropic got last. */
const sent = () => bed.anthropic.lastRequest()!.body as Record<string, unknown>

describe('the openai SDK', () => {
  const responseFormat = {
    type: 'json_schema' as const,
    json_schema: { name: 'trip', schema: SCHEMA, strict: true },
  }

  test('chat.completions.parse: output_config.format upstream, the parsed answer back', async () => {
    const done = await bed.client().chat.completions.parse({
      model: MODEL,
      messages: [{ role: 'user', content: 'Plan a trip' }],
      response_format: responseFormat,
    })
    expect(done.choices[0]!.message.parsed as unknown).toEqual(ANSWER)
    expect(sent().output_config).toEqual({ format: FORMAT })
    expect(sent()).not.toHaveProperty('response_format')
  })

  test('chat.completions.stream → finalChatCompletion parses the streamed JSON', async () => {
    const stream = bed.client().chat.completions.stream({
      model: MODEL,
      messages: [{ role: 'user', content: 'Plan a trip' }],
      response_format: responseFormat,
      stream_options: { include_usage: true },
    })
    const done = await stream.finalChatCompletion()
    expect(done.choices[0]!.message.parsed as unknown).toEqual(ANSWER)
    expect(done.usage?.completion_tokens).toBe(12)
    expect(sent().output_config).toEqual({ format: FORMAT })
  })

  test('responses.parse with text.format json_schema', async () => {
    const done = await bed.client().responses.parse({
      model: MODEL,
      input: 'Plan a trip',
      text: { format: { type: 'json_schema', name: 'trip', schema: SCHEMA, strict: true } },
    })
    expect(done.output_parsed as unknown).toEqual(ANSWER)
    expect(sent().output_config).toEqual({ format: FORMAT })
  })

  test('json_object (no schema): 400 naming response_format, nothing sent', async () => {
    const before = bed.anthropic.requests().length
    const err = await bed
      .client()
      .chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'JSON please' }],
        response_format: { type: 'json_object' },
      })
      .then(
        () => null,
        (e: unknown) => e,
      )
    expect(err).toBeInstanceOf(BadRequestError)
    expect((err as BadRequestError).param).toBe('response_format')
    expect((err as BadRequestError).message).toContain('json_schema')
    expect(bed.anthropic.requests().length).toBe(before)
  })
})

describe("the AI SDK's generateObject", () => {
  const CLIENTS = join(import.meta.dir, '../../clients')
  let ai: any = null
  let provider: any = null
  beforeAll(async () => {
    try {
      ai = await import(Bun.resolveSync('ai', CLIENTS))
      provider = await import(Bun.resolveSync('@ai-sdk/openai', CLIENTS))
    } catch {
      console.log('SKIPPED: the AI SDK tests — ai not installed (npm install --prefix test/clients)')
    }
  })

  for (const api of ['chat', 'responses'] as const) {
    test(`openai.${api}(...): the object, the schema sent as output_config.format`, async () => {
      if (!ai) return
      const openai = provider.createOpenAI({ baseURL: `${bed.gw.url}/v1`, apiKey: bed.key })
      const { object } = await ai.generateObject({
        model: openai[api](MODEL),
        prompt: 'Plan a trip',
        maxRetries: 0,
        schema: ai.jsonSchema(SCHEMA),
      })
      expect(object).toEqual(ANSWER)
      const format = (sent().output_config as { format: { type: string; schema: unknown } }).format
      expect(format.type).toBe('json_schema')
      expect(format.schema).toMatchObject({ properties: SCHEMA.properties, required: SCHEMA.required })
    })
  }
})
