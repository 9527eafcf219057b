/**
 * The official `openai` client's `responses.create` and `responses.stream` → the real gateway →
 * every provider kind (demo; an OpenAI-compatible chat API, translated; Anthropic and Gemini
 * replaying recordings, translated; an OpenAI Responses API replaying recordings, passed through).
 * Every event and response object is checked against OpenAI's published Responses schema.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type ResponsesBed, readResponsesStream, startResponsesBed } from '../../../support/responses-bed.ts'
import { relaxed, validateEvent, validateResponseObject } from '../../../support/responses-schemas.ts'

let bed: ResponsesBed
beforeAll(async () => {
  bed = await startResponsesBed()
})
afterAll(() => bed.stop())

const TRANSLATED = ['demo/echo', 'openai/gpt-4o-mini', 'anthropic/text', 'gemini/text']
const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
}

describe.each(TRANSLATED)('%s (translated)', (model) => {
  test('responses.create answers with a valid Response object', async () => {
    const res = await bed.client().responses.create({ model, input: 'Say hello', instructions: 'Be brief.' })
    expect(validateResponseObject(res)).toBeNull()
    expect(res.model).toBe(model)
    expect(res.status).toBe('completed')
    expect((res as unknown as { store: boolean }).store).toBe(false)
    expect(res.output_text.length).toBeGreaterThan(0)
    expect(res.usage!.input_tokens).toBeGreaterThan(0)
    expect(res.usage!.output_tokens).toBeGreaterThan(0)
    expect(res.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThanOrEqual(0)
  })

  test('responses.stream emits the Responses events in order, every one valid', async () => {
    const stream = bed.client().responses.stream({ model, input: 'Say hello' })
    const types: string[] = []
    let text = ''
    for await (const event of stream) {
      expect(validateEvent(event)).toBeNull()
      types.push(event.type)
      if (event.type === 'response.output_text.delta') text += event.delta
    }
    const final = await stream.finalResponse()
    expect(validateResponseObject(final)).toBeNull()
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ])
    expect(types.at(-1)).toBe('response.completed')
    expect(types).toContain('response.output_text.done')
    expect(final.output_text).toBe(text)
    expect(final.usage!.total_tokens).toBe(final.usage!.input_tokens + final.usage!.output_tokens)
  })

  test('raw stream: event lines, schema, sequence numbers 0, 1, 2, ...', async () => {
    const events = await readResponsesStream(await bed.post({ model, input: 'Hello', stream: true }))
    expect(events[0]!.event).toBe('response.created')
    expect(events.at(-1)!.event).toBe('response.completed')
    expect(events.at(-1)!.data.response.usage.output_tokens).toBeGreaterThan(0)
  })
})

describe('function calls, translated', () => {
  test.each([
    ['anthropic/tool', 'json'],
    ['gemini/tool', undefined],
    ['openai/gpt-4o-mini', 'get_weather'],
    ['demo/echo', 'get_weather'],
  ])('%s streams function_call items with their arguments', async (model, name) => {
    const events = await readResponsesStream(
      await bed.post({
        model,
        input: 'What is the weather? get_weather {"city": "Paris"}',
        tools: [WEATHER],
        stream: true,
      }),
    )
    const done = events.filter((e) => e.event === 'response.output_item.done').map((e) => e.data.item)
    const calls = done.filter((item) => item.type === 'function_call')
    expect(calls.length).toBeGreaterThan(0)
    if (name) expect(calls[0].name).toBe(name)
    const argsDone = events.find((e) => e.event === 'response.function_call_arguments.done')!.data
    expect(argsDone.name).toBe(calls[0].name)
    expect(() => JSON.parse(calls[0].arguments)).not.toThrow()
    const completed = events.at(-1)!.data.response
    expect(completed.output.filter((i: any) => i.type === 'function_call')).toEqual(calls)
  })

  test('a function_call_output turn reaches the upstream as a tool result', async () => {
    const res = await bed.client().responses.create({
      model: 'anthropic/text',
      tools: [WEATHER],
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '18 C, sunny' },
      ],
    })
    expect(validateResponseObject(res)).toBeNull()
    const sent = bed.anthropic.lastRequest()!.body
    expect(sent.messages[1].content[0]).toMatchObject({ type: 'tool_use', id: 'call_1', name: 'get_weather' })
    expect(JSON.stringify(sent.messages[2].content)).toContain('18 C, sunny')
  })
})

describe('pass-through to a Responses upstream (wire: responses)', () => {
  test.each([
    ['text', 'gpt-4o-mini-2024-07-18'],
    ['tool', 'gpt-5.1-2025-11-13'],
    ['reasoning', 'gpt-5.1-codex-max'],
  ] as const)(
    '%s: the recorded stream arrives byte for byte, model id swapped',
    async (fixture, upstreamModel) => {
      const frames = await bed.responses.frames(fixture)
      expect(frames.join('')).toContain(`"model":"${upstreamModel}"`)
      const expected = frames.join('').replaceAll(`"model":"${upstreamModel}"`, `"model":"oair/${fixture}"`)
      const res = await bed.post({ model: `oair/${fixture}`, input: 'Hello', stream: true, store: true })
      expect(await res.text()).toBe(expected)
      const sent = bed.responses.lastRequest()!.body
      expect(sent.model).toBe(fixture)
      expect(sent.store).toBe(false)
    },
  )

  test('usage is recorded from response.completed', async () => {
    const key = await bed.freshKey()
    await (await bed.post({ model: 'oair/reasoning', input: 'Hi', stream: true }, key)).text()
    expect(await bed.usageOf(key, 'oair/reasoning')).toMatchObject({
      prompt_tokens: 134,
      completion_tokens: 28,
    })
    await bed.client(key).responses.create({ model: 'oair/tool', input: 'Hi' })
    // reasoning recording, non-stream: 865 in, 163 out of which 128 reasoning (inside completion).
    await bed.client(key).responses.create({ model: 'oair/reasoning', input: 'Hi' })
    expect(await bed.usageOf(key, 'oair/tool')).toMatchObject({ prompt_tokens: 114, completion_tokens: 88 })
    expect(await bed.usageOf(key, 'oair/reasoning')).toMatchObject({
      prompt_tokens: 134 + 865,
      completion_tokens: 28 + 163,
    })
  })

  test('responses.create and responses.stream through the SDK (relaxed schema: the live API)', async () => {
    const res = await bed.client().responses.create({ model: 'oair/text', input: 'Hi' })
    expect(res.model).toBe('oair/text')
    expect(validateResponseObject(relaxed(res))).toBeNull()
    const stream = bed.client().responses.stream({ model: 'oair/tool', input: 'Weather?', tools: [WEATHER] })
    for await (const event of stream) expect(validateEvent(relaxed(event))).toBeNull()
    const final = await stream.finalResponse()
    expect(final.model).toBe('oair/tool')
    expect(final.output.find((i) => i.type === 'function_call')).toMatchObject({ name: 'get_weather' })
    const events = await readResponsesStream(
      await bed.post({ model: 'oair/reasoning', input: 'x', stream: true }),
      true,
    )
    expect(events.some((e) => e.event === 'response.reasoning_summary_text.delta')).toBe(true)
  })

  test("the client's text reaches the upstream as written: only model and store edited, store added first where absent", async () => {
    // `1.0`, an escape, spacing and an item without `type` are the client's; re-serialised they were not.
    const res = await bed.post(
      '{"model":"oair/text", "input":[{"role":"user","content":"caf\\u00e9"}],"temperature":1.0,"store":true}',
    )
    expect(res.status).toBe(200)
    await res.body?.cancel()
    expect(bed.responses.lastRequest()!.text).toBe(
      '{"model":"text", "input":[{"role":"user","content":"caf\\u00e9"}],"temperature":1.0,"store":false}',
    )
    const bare = await bed.post('{"model":"oair/text","input":"\\u00e9","top_p":1.0}')
    expect(bare.status).toBe(200)
    await bare.body?.cancel()
    expect(bed.responses.lastRequest()!.text).toBe(
      '{"store":false,"model":"text","input":"\\u00e9","top_p":1.0}',
    )
  })

  test('hosted tools reach an upstream that runs them', async () => {
    await (
      await bed.post({ model: 'oair/text', input: 'Hi', tools: [{ type: 'web_search' }], stream: true })
    ).text()
    expect(bed.responses.lastRequest()!.body.tools).toEqual([{ type: 'web_search' }])
  })

  test('the recorded out-of-quota stream fails before content: an HTTP error, nothing of it relayed', async () => {
    const before = bed.responses.requests().length
    const res = await bed.post({ model: 'oair/error', input: 'Hi', stream: true })
    expect(res.status).toBe(502)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    // insufficient_quota is a credential failure: the key rests, no retry on it, no fallback here.
    expect(res.headers.get('x-switchyard-attempts')).toBe('1')
    expect(bed.responses.requests().length - before).toBe(1)
    const { error } = (await res.json()) as any
    expect(error.code).toBe('upstream_billing_error')
    expect(error.message).toContain('You exceeded your current quota')
  })
})
