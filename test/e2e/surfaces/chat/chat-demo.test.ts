/**
 * The offline starter end to end: the shipped `switchyard.example.yaml` (the `demo` provider, no
 * network) behind the real server, used through the official `openai` client — text, a stream,
 * a tool call and its follow-up, JSON mode and JSON schema, and a feature refusal.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI, { type BadRequestError } from 'openai'
import { quotePlaceholders } from '../../../../src/config/yaml.ts'
import { WEATHER_TOOLS } from '../../../support/chat-bed.ts'
import { startGateway, type TestGateway } from '../../../support/gateway.ts'

let gw: TestGateway
let client: OpenAI
beforeAll(async () => {
  const text = await Bun.file(new URL('../../../../switchyard.example.yaml', import.meta.url)).text()
  const doc = Bun.YAML.parse(quotePlaceholders(text)) as Record<string, any>
  doc.server.port = 0
  // A plan without limits beside the starter's own, so rate limits stay out of these tests.
  doc.plans.unlimited = { rpm: null, rpd: null, models: ['*'] }
  gw = await startGateway({ doc })
  const { key } = await gw.key('demo-user', 'unlimited')
  client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 })
})
afterAll(() => gw.stop())

describe('the demo provider through the openai client', () => {
  test('the model list shows the demo models with their features', async () => {
    const ids = []
    for await (const model of client.models.list()) ids.push(model.id)
    expect(ids.sort()).toEqual(['demo/agent', 'demo/echo', 'demo/echo-pro', 'demo/embed', 'demo/flaky'])
  })

  test('text completion', async () => {
    const res = await client.chat.completions.create({
      model: 'demo/echo',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello, gateway' },
      ],
    })
    expect(res.model).toBe('demo/echo')
    expect(res.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Echo: Hello, gateway' })
    expect(res.choices[0]!.finish_reason).toBe('stop')
    expect(res.usage!.total_tokens).toBeGreaterThan(0)
  })

  test('stream with for await, usage chunk on request', async () => {
    const stream = await client.chat.completions.create({
      model: 'demo/echo',
      messages: [{ role: 'user', content: 'Stream this please' }],
      stream: true,
      stream_options: { include_usage: true },
    })
    let content = ''
    const chunks: OpenAI.ChatCompletionChunk[] = []
    for await (const chunk of stream) {
      chunks.push(chunk)
      content += chunk.choices[0]?.delta.content ?? ''
    }
    expect(content).toBe('Echo: Stream this please')
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant')
    expect(chunks.every((c) => c.model === 'demo/echo')).toBe(true)
    expect(chunks.at(-1)!.choices).toEqual([])
    expect(chunks.at(-1)!.usage!.completion_tokens).toBeGreaterThan(0)
  })

  test('a tool call (rebuilt by the stream helper), then the answer to its result', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Use get_weather with {"location":"Paris"}' },
    ]
    const runner = client.chat.completions.stream({ model: 'demo/echo', messages, tools: WEATHER_TOOLS })
    const final = await runner.finalChatCompletion()
    expect(final.choices[0]!.finish_reason).toBe('tool_calls')
    const calls = final.choices[0]!.message.tool_calls!
    expect(calls).toHaveLength(1)
    const call = calls[0]!
    if (call.type !== 'function') throw new Error('expected a function call')
    expect(call.function.name).toBe('get_weather')
    expect(JSON.parse(call.function.arguments)).toEqual({ location: 'Paris' })
    expect(call.id).toMatch(/^call_demo_/)

    // The same call non-streamed, and the conversation continued with the tool's result.
    const plain = await client.chat.completions.create({ model: 'demo/echo', messages, tools: WEATHER_TOOLS })
    expect(plain.choices[0]!.message.tool_calls).toEqual(calls)
    const next = await client.chat.completions.create({
      model: 'demo/echo',
      tools: WEATHER_TOOLS,
      messages: [
        ...messages,
        { role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: call.id, content: '18C and sunny' },
      ],
    })
    expect(next.choices[0]!.message.content).toBe('Tool result received: 18C and sunny')
  })

  test('JSON mode returns a JSON object; JSON schema (echo-pro) a value of the schema', async () => {
    const json = await client.chat.completions.create({
      model: 'demo/echo',
      messages: [{ role: 'user', content: 'Answer in JSON' }],
      response_format: { type: 'json_object' },
    })
    expect(JSON.parse(json.choices[0]!.message.content!)).toEqual({ echo: 'Echo: Answer in JSON' })

    const schema = await client.chat.completions.create({
      model: 'demo/echo-pro',
      messages: [{ role: 'user', content: 'Fill it in' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'answer',
          schema: {
            type: 'object',
            properties: { answer: { type: 'string' }, count: { type: 'integer' } },
            required: ['answer', 'count'],
          },
        },
      },
    })
    const value = JSON.parse(schema.choices[0]!.message.content!)
    expect(typeof value.answer).toBe('string')
    expect(Number.isInteger(value.count)).toBe(true)
  })

  test('a prompt past the model’s context window (by the demo’s own count) → 400 context_length_exceeded, stream or not', async () => {
    // demo/echo: context_window 8192; the demo counts about 4 characters a token.
    const long = 'x'.repeat(8_192 * 4 + 400)
    for (const stream of [false, true]) {
      const err = await client.chat.completions
        .create({ model: 'demo/echo', stream, messages: [{ role: 'user', content: long }] })
        .catch((e: unknown) => e)
      expect(err).toBeInstanceOf(OpenAI.BadRequestError)
      expect((err as BadRequestError).code).toBe('context_length_exceeded')
      expect((err as BadRequestError).param).toBe('messages')
    }
    // Within the window it answers.
    const ok = await client.chat.completions.create({
      model: 'demo/echo',
      messages: [{ role: 'user', content: 'x'.repeat(8_000 * 4) }],
    })
    expect(ok.choices[0]!.finish_reason).toBeDefined()
  })

  test('a feature the demo model lacks → BadRequestError unsupported_feature', async () => {
    const err = await client.chat.completions
      .create({
        model: 'demo/echo',
        messages: [{ role: 'user', content: 'two please' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect((err as BadRequestError).code).toBe('unsupported_feature')
    expect((err as BadRequestError).param).toBe('response_format')
  })
})
