/**
 * The Vercel AI SDK's Anthropic provider (`@ai-sdk/anthropic`) and LangChain's `ChatAnthropic`
 * (`@langchain/anthropic`) pointed at the gateway's `POST /v1/messages` with a `baseURL`:
 * generateText / invoke, streamText / stream (usage included), a tool-call round trip and
 * generateObject / withStructuredOutput, against
 * - `anthropic/*`: an anthropic provider on the fake Anthropic (passed through): what reaches the
 *   upstream is checked (the upstream key, the anthropic-version header, the tool results);
 * - `mock/gpt-4o-mini` (an OpenAI-kind model on the mock upstream) and `demo/echo`: translated.
 * Also thinking (pass-through, and refused by name where the model lacks reasoning), the
 * anthropic-beta header, an image to the OpenAI upstream. Errors surface as the SDKs' typed errors
 * (the AI SDK's APICallError, the Anthropic SDK's BadRequestError / RateLimitError under
 * LangChain), the gateway's own 429 included.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type MockUpstream, startMockUpstream } from '../../../scripts/mock-upstream.ts'
import { type FakeUpstream, startFakeAnthropic } from '../../support/fake-anthropic.ts'
import { DEMO_PROVIDER, PLANS, startGateway, type TestGateway } from '../../support/gateway.ts'

const CLIENTS = join(import.meta.dir, '../../clients')
const UPSTREAM_KEY = 'sk-ant-upstream-456'
const FEATURES = ['streaming', 'tools', 'parallel_tool_calls', 'json_schema', 'system_messages', 'vision']
const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 200_000,
  max_output_tokens: 8192,
  features: FEATURES,
  ...extra,
})

let ai: any = null
let aiAnthropic: any = null
let lc: any = null
let lcTools: any = null
let lcMessages: any = null
let gw: TestGateway
let fake: FakeUpstream<string>
let mock: MockUpstream
let key = ''

beforeAll(async () => {
  ;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false
  try {
    ai = await import(Bun.resolveSync('ai', CLIENTS))
    aiAnthropic = await import(Bun.resolveSync('@ai-sdk/anthropic', CLIENTS))
    lc = await import(Bun.resolveSync('@langchain/anthropic', CLIENTS))
    lcTools = await import(Bun.resolveSync('@langchain/core/tools', CLIENTS))
    lcMessages = await import(Bun.resolveSync('@langchain/core/messages', CLIENTS))
  } catch {
    ai = null
    console.log(
      'SKIPPED: test/e2e/clients/anthropic-clients.test.ts — @ai-sdk/anthropic or @langchain/anthropic not installed (npm install --prefix test/clients)',
    )
    return
  }
  fake = await startFakeAnthropic({ apiKey: UPSTREAM_KEY, afterToolResult: 'text' })
  mock = await startMockUpstream({ chunks: 4 })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0, stream_hold_ms: 300, stream_keepalive_ms: 5_000 },
      usage: { flush_ms: 20 },
      providers: [
        {
          prefix: 'anthropic',
          kind: 'anthropic',
          base_url: fake.url,
          api_key: UPSTREAM_KEY,
          models: [
            ...['text', 'tool', 'structured', 'invalid-request'].map((n) => model(n)),
            model('thinking', { features: [...FEATURES, 'reasoning'] }),
          ],
        },
        {
          prefix: 'mock',
          kind: 'openai',
          base_url: mock.url,
          api_key: UPSTREAM_KEY,
          models: [model('gpt-4o-mini'), model('fault-400')],
        },
        DEMO_PROVIDER,
      ],
      plans: { ...PLANS, tiny: { rpm: 1, rpd: null, models: ['*'] } },
      default_plan: 'free',
    },
  })
  key = (await gw.key('anthropic-clients', 'unlimited')).key
})
afterAll(async () => {
  await gw?.stop()
  await Promise.all([fake?.stop(), mock?.stop()])
})

const sdk = () =>
  aiAnthropic.createAnthropic({ baseURL: `${gw.url}/v1`, apiKey: key }) as (id: string) => unknown
const chat = (id: string, extra: Record<string, unknown> = {}) =>
  new lc.ChatAnthropic({
    model: id,
    apiKey: key,
    anthropicApiUrl: gw.url,
    maxRetries: 0,
    maxTokens: 256,
    ...extra,
  })
/** The body and headers the fake Anthropic got last. */
const upstream = () => fake.lastRequest()!
/** The chat body the mock upstream got last. */
const mockBody = () => mock.stats.lastBody as Record<string, any>

/** The answer of the `tool` recording: a call of `json` with these elements. */
const ELEMENTS = [
  { location: 'San Francisco', temperature: -5, condition: 'snowy' },
  { location: 'London', temperature: 0, condition: 'snowy' },
  { location: 'Paris', temperature: 23, condition: 'cloudy' },
  { location: 'Berlin', temperature: -9, condition: 'snowy' },
]
const ELEMENTS_SCHEMA = {
  type: 'object',
  properties: {
    elements: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          location: { type: 'string' },
          temperature: { type: 'number' },
          condition: { type: 'string' },
        },
        required: ['location', 'temperature', 'condition'],
      },
    },
  },
  required: ['elements'],
}

/** The answer of the `structured` recording (output_config.format): this JSON as text. */
const TRIP_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer' } },
  required: ['city', 'days'],
  additionalProperties: false,
}

describe('@ai-sdk/anthropic, anthropic provider (pass-through)', () => {
  test('generateText: the text and usage; the upstream gets its own key and anthropic-version', async () => {
    if (!ai) return
    const r = await ai.generateText({ model: sdk()('anthropic/text'), prompt: 'Hello', maxRetries: 0 })
    expect(r.text).toBe('Hello!')
    expect(r.finishReason).toBe('stop')
    expect(r.usage.inputTokens).toBe(10)
    expect(r.usage.outputTokens).toBe(5)
    const req = upstream()
    expect(req.body.model).toBe('text')
    expect(req.headers['x-api-key']).toBe(UPSTREAM_KEY)
    expect(req.headers['anthropic-version']).toBe('2023-06-01')
    expect(req.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }])
  })

  test('streamText: the streamed text, usage from message_start + message_delta', async () => {
    if (!ai) return
    const r = ai.streamText({ model: sdk()('anthropic/text'), prompt: 'Hello', maxRetries: 0 })
    let text = ''
    for await (const part of r.textStream) text += part
    expect(text.length).toBeGreaterThan(0)
    expect(await r.text).toBe(text)
    const usage = await r.usage
    expect(usage.inputTokens).toBe(12)
    expect(usage.outputTokens).toBe(30)
    expect(await r.finishReason).toBe('stop')
    expect(upstream().body.stream).toBe(true)
  })

  test('a tool-call round trip: the call, the executed result reaches the upstream as tool_result', async () => {
    if (!ai) return
    const seen: unknown[] = []
    const r = await ai.generateText({
      model: sdk()('anthropic/tool'),
      prompt: 'The weather?',
      maxRetries: 0,
      stopWhen: ai.stepCountIs(2),
      tools: {
        json: ai.tool({
          inputSchema: ai.jsonSchema(ELEMENTS_SCHEMA),
          execute: async (input: unknown) => {
            seen.push(input)
            return 'recorded 4 cities'
          },
        }),
      },
    })
    expect(r.steps.length).toBe(2)
    expect(r.steps[0].toolCalls.map((c: any) => c.toolName)).toEqual(['json'])
    expect(seen).toEqual([{ elements: ELEMENTS }])
    expect(r.text).toBe('Hello!')
    const messages = upstream().body.messages as any[]
    expect(messages.at(-2).content.some((b: any) => b.type === 'tool_use')).toBe(true)
    const result = messages.at(-1).content.find((b: any) => b.type === 'tool_result')
    expect(result.tool_use_id).toBe('toolu_01Q9ExVZnzZj7E2QQYHYtNUa')
    expect(JSON.stringify(result.content)).toContain('recorded 4 cities')
  })

  test('streamText tool-call round trip: the streamed tool_use, then the tool_result upstream', async () => {
    if (!ai) return
    const r = ai.streamText({
      model: sdk()('anthropic/tool'),
      prompt: 'The weather?',
      maxRetries: 0,
      stopWhen: ai.stepCountIs(2),
      tools: {
        json: ai.tool({
          inputSchema: ai.jsonSchema(ELEMENTS_SCHEMA),
          execute: async () => 'recorded 4 cities',
        }),
      },
    })
    const steps = await r.steps
    expect(steps.length).toBe(2)
    // The streamed recording's call (its input assembled from the input_json_delta fragments).
    expect(steps[0].toolCalls.map((c: any) => c.input)).toEqual([
      { elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }] },
    ])
    expect(steps[0].toolCalls[0].toolCallId).toBe('toolu_01KFbKqPYSuAKujiL6mTfzYA')
    expect((await r.text).length).toBeGreaterThan(0)
    const last = (upstream().body.messages as any[]).at(-1)
    expect(JSON.stringify(last.content)).toContain('recorded 4 cities')
    expect(upstream().body.stream).toBe(true)
  })

  test('thinking: the budget reaches the upstream, the reasoning comes back (generate and stream)', async () => {
    if (!ai) return
    const providerOptions = { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } }
    const opts = { model: sdk()('anthropic/thinking'), prompt: 'Divide', maxRetries: 0, providerOptions }
    const r = await ai.generateText({ ...opts, maxOutputTokens: 3000 })
    expect(r.text).toBe('925 ÷ 5 = 185')
    expect(r.reasoningText).toBe('925 divided by 5 = 185')
    expect(upstream().body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
    const s = ai.streamText({ ...opts, maxOutputTokens: 3000 })
    expect(await s.text).toBe('925 ÷ 5 = 185')
    expect(await s.reasoningText).toContain('925 ÷ 5 = 185')
  })

  test('generateObject: the SDK’s json tool answered by the upstream, parsed into the object', async () => {
    if (!ai) return
    const r = await ai.generateObject({
      model: sdk()('anthropic/tool'),
      schema: ai.jsonSchema(ELEMENTS_SCHEMA),
      prompt: 'The weather in four cities',
      maxRetries: 0,
    })
    expect(r.object).toEqual({ elements: ELEMENTS })
    const body = upstream().body
    expect(body.tools.map((t: any) => t.name)).toEqual(['json'])
    expect(body.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true })
  })

  test('generateObject with structuredOutputMode outputFormat: output_config.format reaches the upstream', async () => {
    if (!ai) return
    const r = await ai.generateObject({
      model: sdk()('anthropic/structured'),
      schema: ai.jsonSchema(TRIP_SCHEMA),
      prompt: 'Plan a trip',
      maxRetries: 0,
      providerOptions: { anthropic: { structuredOutputMode: 'outputFormat' } },
    })
    expect(r.object).toEqual({ city: 'Paris', days: 3 })
    expect(upstream().body.output_config.format).toMatchObject({ type: 'json_schema' })
    expect(upstream().body.output_config.format.schema.required).toEqual(['city', 'days'])
    expect(upstream().body).not.toHaveProperty('tools')
  })

  test('an upstream 400 → APICallError with statusCode 400, the upstream key not leaked', async () => {
    if (!ai) return
    const err = await ai
      .generateText({ model: sdk()('anthropic/invalid-request'), prompt: 'Hello', maxRetries: 0 })
      .then(
        () => null,
        (e: unknown) => e as { statusCode?: number; message: string; responseBody?: string },
      )
    expect(ai.APICallError.isInstance(err)).toBe(true)
    expect(err!.statusCode).toBe(400)
    expect(err!.responseBody ?? '').not.toContain(UPSTREAM_KEY)
  })

  test('demo/echo with the SDK’s default max_tokens (4096 > 1024) → APICallError 400 naming max_tokens', async () => {
    if (!ai) return
    const err = await ai.generateText({ model: sdk()('demo/echo'), prompt: 'Hello', maxRetries: 0 }).then(
      () => null,
      (e: unknown) => e as { statusCode?: number; message: string },
    )
    expect(ai.APICallError.isInstance(err)).toBe(true)
    expect(err!.statusCode).toBe(400)
    expect(err!.message).toContain('max_tokens')
  })

  test('an anthropic-beta header set on the provider reaches the upstream verbatim', async () => {
    if (!ai) return
    const beta = aiAnthropic.createAnthropic({
      baseURL: `${gw.url}/v1`,
      apiKey: key,
      headers: { 'anthropic-beta': 'context-management-2025-06-27' },
    })
    const r = await ai.generateText({ model: beta('anthropic/text'), prompt: 'Hello', maxRetries: 0 })
    expect(r.text).toBe('Hello!')
    expect(upstream().headers['anthropic-beta']).toBe('context-management-2025-06-27')
  })

  test('a wrong gateway key → APICallError 401', async () => {
    if (!ai) return
    const bad = aiAnthropic.createAnthropic({ baseURL: `${gw.url}/v1`, apiKey: 'sk-wrong' })
    const err = await ai.generateText({ model: bad('anthropic/text'), prompt: 'Hello', maxRetries: 0 }).then(
      () => null,
      (e: unknown) => e as { statusCode?: number },
    )
    expect(ai.APICallError.isInstance(err)).toBe(true)
    expect(err!.statusCode).toBe(401)
  })
})

describe('@ai-sdk/anthropic, translated models', () => {
  test('generateText on mock/gpt-4o-mini: text and usage; the upstream got a chat request', async () => {
    if (!ai) return
    const r = await ai.generateText({ model: sdk()('mock/gpt-4o-mini'), prompt: 'Hello', maxRetries: 0 })
    expect(r.text.length).toBeGreaterThan(0)
    expect(r.usage.inputTokens).toBeGreaterThan(0)
    expect(r.usage.outputTokens).toBeGreaterThan(0)
    expect(mockBody().model).toBe('gpt-4o-mini')
    expect(mockBody().messages.at(-1)).toMatchObject({ role: 'user' })
  })

  // The SDK sends max_tokens 4096 for a model it does not know; demo/echo produces at most 1024, and
  // the contract refuses a max_tokens above the model's (as Anthropic does): so 512 here.
  test.each(['mock/gpt-4o-mini', 'demo/echo'])('streamText on %s: text and usage', async (id) => {
    if (!ai) return
    const r = ai.streamText({ model: sdk()(id), prompt: 'Hello there', maxRetries: 0, maxOutputTokens: 512 })
    let text = ''
    for await (const part of r.textStream) text += part
    expect(text.length).toBeGreaterThan(0)
    const usage = await r.usage
    expect(usage.inputTokens).toBeGreaterThan(0)
    expect(usage.outputTokens).toBeGreaterThan(0)
    expect(await r.finishReason).toBe('stop')
  })

  test('a tool-call round trip on mock/gpt-4o-mini: tool results reach the upstream as tool messages', async () => {
    if (!ai) return
    const r = await ai.generateText({
      model: sdk()('mock/gpt-4o-mini'),
      prompt: 'The weather in Paris?',
      maxRetries: 0,
      stopWhen: ai.stepCountIs(2),
      tools: {
        get_weather: ai.tool({
          inputSchema: ai.jsonSchema({ type: 'object', properties: { city: { type: 'string' } } }),
          execute: async () => 'sunny-result-42',
        }),
      },
    })
    expect(r.steps.length).toBe(2)
    expect(r.steps[0].toolCalls.length).toBe(2)
    expect(r.steps[0].toolCalls.every((c: any) => c.toolName === 'get_weather')).toBe(true)
    expect(r.text.length).toBeGreaterThan(0)
    const tools = (mockBody().messages as any[]).filter((m) => m.role === 'tool')
    expect(tools.length).toBe(2)
    expect(JSON.stringify(tools)).toContain('sunny-result-42')
  })

  test('generateObject on demo/echo-pro (json tool, translated): the object', async () => {
    if (!ai) return
    const r = await ai.generateObject({
      model: sdk()('demo/echo-pro'),
      schema: ai.jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
      prompt: 'Paris',
      maxRetries: 0,
      maxOutputTokens: 512,
    })
    expect(typeof r.object.city).toBe('string')
  })

  test('streamText tool-call round trip on mock/gpt-4o-mini: streamed tool_use blocks, then the answer', async () => {
    if (!ai) return
    const r = ai.streamText({
      model: sdk()('mock/gpt-4o-mini'),
      prompt: 'The weather in Paris?',
      maxRetries: 0,
      stopWhen: ai.stepCountIs(2),
      tools: {
        get_weather: ai.tool({
          inputSchema: ai.jsonSchema({ type: 'object', properties: { city: { type: 'string' } } }),
          execute: async () => 'sunny-result-42',
        }),
      },
    })
    const steps = await r.steps
    expect(steps.length).toBe(2)
    expect(steps[0].toolCalls.length).toBe(2)
    expect(steps[0].toolCalls.map((c: any) => typeof c.input)).toEqual(['object', 'object'])
    expect((await r.text).length).toBeGreaterThan(0)
    expect((await r.totalUsage).outputTokens).toBeGreaterThan(0)
    expect(JSON.stringify(mockBody().messages)).toContain('sunny-result-42')
  })

  test('an image part reaches the OpenAI upstream as an image_url data URL', async () => {
    if (!ai) return
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
    const r = await ai.generateText({
      model: sdk()('mock/gpt-4o-mini'),
      maxRetries: 0,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is it?' },
            { type: 'image', image: png, mediaType: 'image/png' },
          ],
        },
      ],
    })
    expect(r.text.length).toBeGreaterThan(0)
    expect(mockBody().messages.at(-1).content).toEqual([
      { type: 'text', text: 'What is it?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
    ])
  })

  test('thinking to a model without reasoning → APICallError 400 naming reasoning', async () => {
    if (!ai) return
    const err = await ai
      .generateText({
        model: sdk()('mock/gpt-4o-mini'),
        prompt: 'Hello',
        maxRetries: 0,
        maxOutputTokens: 3000,
        providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } },
      })
      .then(
        () => null,
        (e: unknown) => e as { statusCode?: number; message: string },
      )
    expect(ai.APICallError.isInstance(err)).toBe(true)
    expect(err!.statusCode).toBe(400)
    expect(err!.message).toContain('reasoning')
  })

  test('an upstream 400 on a translated model → APICallError 400', async () => {
    if (!ai) return
    const err = await ai
      .generateText({ model: sdk()('mock/fault-400'), prompt: 'Hello', maxRetries: 0 })
      .then(
        () => null,
        (e: unknown) => e as { statusCode?: number },
      )
    expect(ai.APICallError.isInstance(err)).toBe(true)
    expect(err!.statusCode).toBe(400)
  })
})

describe('@langchain/anthropic ChatAnthropic, anthropic provider (pass-through)', () => {
  test('invoke: the text and usage_metadata; anthropic-version reaches the upstream', async () => {
    if (!ai) return
    const msg = await chat('anthropic/text').invoke('Hello')
    expect(msg.content).toBe('Hello!')
    expect(msg.usage_metadata).toMatchObject({ input_tokens: 10, output_tokens: 5 })
    expect(upstream().headers['anthropic-version']).toBe('2023-06-01')
    expect(upstream().headers['x-api-key']).toBe(UPSTREAM_KEY)
  })

  test('stream: the chunks concatenate to the text, usage on the aggregate', async () => {
    if (!ai) return
    let full: any = null
    for await (const chunk of await chat('anthropic/text').stream('Hello')) {
      full = full ? full.concat(chunk) : chunk
    }
    expect(typeof full.content === 'string' ? full.content : full.text).not.toBe('')
    // LangChain adds message_start's output_tokens (1) to message_delta's cumulative 30: it does so
    // against Anthropic itself, and the gateway passes both events through as recorded.
    expect(full.usage_metadata).toMatchObject({ input_tokens: 12, output_tokens: 31 })
    expect(upstream().body.stream).toBe(true)
  })

  test('bindTools round trip: the tool call, then the ToolMessage reaches the upstream as tool_result', async () => {
    if (!ai) return
    const json = lcTools.tool(async () => 'recorded 4 cities', {
      name: 'json',
      description: 'Record the weather',
      schema: ELEMENTS_SCHEMA,
    })
    const m = chat('anthropic/tool').bindTools([json])
    const first = await m.invoke('The weather?')
    expect(first.tool_calls.map((c: any) => c.name)).toEqual(['json'])
    expect(first.tool_calls[0].args).toEqual({ elements: ELEMENTS })
    const toolMsg = await json.invoke(first.tool_calls[0])
    const second = await m.invoke([new lcMessages.HumanMessage('The weather?'), first, toolMsg])
    expect(second.content).toBe('Hello!')
    const last = (upstream().body.messages as any[]).at(-1)
    const result = last.content.find((b: any) => b.type === 'tool_result')
    expect(result.tool_use_id).toBe('toolu_01Q9ExVZnzZj7E2QQYHYtNUa')
    expect(JSON.stringify(result.content)).toContain('recorded 4 cities')
  })

  test('withStructuredOutput (tool calling): the parsed object', async () => {
    if (!ai) return
    const s = chat('anthropic/tool').withStructuredOutput(
      { ...ELEMENTS_SCHEMA, title: 'json', description: 'The weather' },
      { name: 'json' },
    )
    expect(await s.invoke('The weather in four cities')).toEqual({ elements: ELEMENTS })
    expect(upstream().body.tool_choice).toMatchObject({ type: 'tool', name: 'json' })
  })

  test('withStructuredOutput (method jsonSchema): output_config.format upstream, the parsed object', async () => {
    if (!ai) return
    const s = chat('anthropic/structured').withStructuredOutput(
      { ...TRIP_SCHEMA, title: 'trip' },
      { method: 'jsonSchema' },
    )
    expect(await s.invoke('Plan a trip')).toEqual({ city: 'Paris', days: 3 })
    expect(upstream().body.output_config.format).toMatchObject({ type: 'json_schema' })
    expect(upstream().body).not.toHaveProperty('tools')
  })

  test('stream with thinking: the thinking block and its signature survive the pass-through', async () => {
    if (!ai) return
    let full: any = null
    const m = chat('anthropic/thinking', {
      maxTokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    })
    for await (const chunk of await m.stream('Divide')) full = full ? full.concat(chunk) : chunk
    const thinking = full.content.find((b: any) => b.type === 'thinking')
    expect(thinking.thinking).toContain('925 ÷ 5 = 185')
    expect(thinking.signature.length).toBeGreaterThan(20)
    expect(upstream().body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
  })

  test('an upstream 400 → the Anthropic SDK’s BadRequestError (status 400)', async () => {
    if (!ai) return
    const err = await chat('anthropic/invalid-request')
      .invoke('Hello')
      .then(
        () => null,
        (e: unknown) => e as { status?: number; name?: string; constructor: { name: string } },
      )
    expect(err).not.toBeNull()
    expect(err!.status).toBe(400)
    expect(err!.constructor.name).toBe('BadRequestError')
  })
})

describe('@langchain/anthropic ChatAnthropic, translated models', () => {
  test.each(['mock/gpt-4o-mini', 'demo/echo'])('invoke and stream on %s', async (id) => {
    if (!ai) return
    const msg = await chat(id).invoke('Hello there')
    expect(String(msg.content).length).toBeGreaterThan(0)
    expect(msg.usage_metadata.output_tokens).toBeGreaterThan(0)
    let full: any = null
    for await (const chunk of await chat(id).stream('Hello there')) full = full ? full.concat(chunk) : chunk
    expect(full.usage_metadata.output_tokens).toBeGreaterThan(0)
    // Not checked: the streamed input_tokens. LangChain reads them from message_start only, and a
    // translated stream's message_start carries no usage (the upstream reports it at the end, in
    // message_delta), so LangChain streams show input_tokens 0 on translated models.
  })

  test.each(['functionCalling', 'jsonSchema'])(
    'withStructuredOutput (%s) on demo/echo-pro: the parsed object',
    async (method) => {
      if (!ai) return
      const s = chat('demo/echo-pro').withStructuredOutput(
        { type: 'object', title: 'trip', properties: { city: { type: 'string' } }, required: ['city'] },
        { method },
      )
      const out = await s.invoke('Paris')
      expect(typeof out.city).toBe('string')
    },
  )

  test('bindTools round trip on mock/gpt-4o-mini: the ToolMessages reach the upstream', async () => {
    if (!ai) return
    const weather = lcTools.tool(async () => 'sunny-result-42', {
      name: 'get_weather',
      description: 'Weather of a city',
      schema: { type: 'object', properties: { city: { type: 'string' } } },
    })
    const m = chat('mock/gpt-4o-mini').bindTools([weather])
    const first = await m.invoke('The weather in Paris?')
    expect(first.tool_calls.length).toBe(2)
    const results = await Promise.all(first.tool_calls.map((c: any) => weather.invoke(c)))
    const second = await m.invoke([new lcMessages.HumanMessage('The weather in Paris?'), first, ...results])
    expect(String(second.content).length).toBeGreaterThan(0)
    const tools = (mockBody().messages as any[]).filter((x) => x.role === 'tool')
    expect(tools.length).toBe(2)
    expect(JSON.stringify(tools)).toContain('sunny-result-42')
  })

  test('stream with bound tools on mock/gpt-4o-mini: the aggregated chunks carry both tool calls', async () => {
    if (!ai) return
    const weather = lcTools.tool(async () => 'sunny', {
      name: 'get_weather',
      description: 'Weather of a city',
      schema: { type: 'object', properties: { city: { type: 'string' } } },
    })
    let full: any = null
    for await (const chunk of await chat('mock/gpt-4o-mini').bindTools([weather]).stream('Paris?'))
      full = full ? full.concat(chunk) : chunk
    expect(full.tool_calls.map((c: any) => c.name)).toEqual(['get_weather', 'get_weather'])
    expect(full.tool_calls.every((c: any) => typeof c.args === 'object' && c.id)).toBe(true)
    expect(full.usage_metadata.output_tokens).toBeGreaterThan(0)
  })
})

describe('the gateway’s own rate limit (plan rpm 1) as typed errors', () => {
  test('AI SDK: APICallError 429, retryable, with the anthropic-ratelimit headers; LangChain: RateLimitError', async () => {
    if (!ai) return
    const tiny = (await gw.key('anthropic-clients-tiny', 'tiny')).key
    const limited = aiAnthropic.createAnthropic({ baseURL: `${gw.url}/v1`, apiKey: tiny })
    const call = () =>
      ai.generateText({ model: limited('demo/echo'), prompt: 'Hi', maxRetries: 0, maxOutputTokens: 64 })
    expect((await call()).text).toBe('Echo: Hi')
    const err = await call().then(
      () => null,
      (e: unknown) =>
        e as { statusCode?: number; isRetryable?: boolean; responseHeaders?: Record<string, string> },
    )
    expect(ai.APICallError.isInstance(err)).toBe(true)
    expect(err!.statusCode).toBe(429)
    expect(err!.isRetryable).toBe(true)
    expect(err!.responseHeaders!['anthropic-ratelimit-requests-remaining']).toBe('0')
    const lcErr = await new lc.ChatAnthropic({
      model: 'demo/echo',
      apiKey: tiny,
      anthropicApiUrl: gw.url,
      maxRetries: 0,
      maxTokens: 64,
    })
      .invoke('Hi')
      .then(
        () => null,
        (e: unknown) => e as { status?: number; constructor: { name: string } },
      )
    expect(lcErr!.status).toBe(429)
    expect(lcErr!.constructor.name).toBe('RateLimitError')
  })
})
