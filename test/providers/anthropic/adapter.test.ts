import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ChatRequest } from '../../../src/operations/chat.ts'
import { createAnthropicAdapter } from '../../../src/providers/anthropic/index.ts'
import { ANTHROPIC_FIXTURES, type FakeUpstream, startFakeAnthropic } from '../../support/fake-anthropic.ts'
import { validateChunk, validateResponse } from '../../support/openai-schemas.ts'
import { CONVERSATION, CONVERSATION_BODY } from './conversation.ts'
import { API_KEY, anthropicProvider, assemble, callContext, drain, planItems, readEvents } from './helpers.ts'

let fake: FakeUpstream<keyof typeof ANTHROPIC_FIXTURES>
beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: API_KEY })
})
afterAll(() => fake.stop())

const request = (model: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model,
  messages: [{ role: 'user', content: 'Hello, how are you?' }],
  max_tokens: 512,
  temperature: 1,
  ...extra,
})

async function complete(model: string, extra: Partial<ChatRequest> = {}) {
  const provider = anthropicProvider(fake.url)
  const res = await createAnthropicAdapter(provider).complete(request(model, extra), callContext(provider))
  expect(validateResponse(res)).toBeNull()
  return res
}

async function stream(model: string, extra: Partial<ChatRequest> = {}) {
  const provider = anthropicProvider(fake.url)
  const out = await drain(
    planItems(await createAnthropicAdapter(provider).stream(request(model, extra), callContext(provider))),
  )
  for (const chunk of out.chunks) expect(validateChunk(chunk)).toBeNull()
  return out
}

/** Concatenation of the recording's text deltas / tool JSON deltas. */
async function recordedDeltas(
  fixture: 'text' | 'tool' | 'two-tools',
  kind: 'text_delta' | 'input_json_delta',
  block?: number,
) {
  const events = await readEvents(ANTHROPIC_FIXTURES[fixture].chunks)
  return events
    .filter(
      (e) =>
        e.type === 'content_block_delta' &&
        e.delta.type === kind &&
        (block === undefined || e.index === block),
    )
    .map((e) => e.delta.text ?? e.delta.partial_json)
    .join('')
}

describe('Anthropic adapter, non-streaming', () => {
  test('sends the exact body to POST /v1/messages with the key and version headers', async () => {
    const provider = anthropicProvider(fake.url)
    await createAnthropicAdapter(provider).complete({ ...CONVERSATION, model: 'text' }, callContext(provider))
    const seen = fake.lastRequest()!
    expect(seen.method).toBe('POST')
    expect(seen.path).toBe('/v1/messages')
    expect(seen.headers['x-api-key']).toBe(API_KEY)
    expect(seen.headers['anthropic-version']).toBe('2023-06-01')
    expect(seen.headers['content-type']).toBe('application/json')
    expect(seen.body).toEqual({ ...CONVERSATION_BODY, model: 'text' })
  })

  test('anthropic_version, extra headers and a base_url ending in /v1 are honoured', async () => {
    const provider = anthropicProvider(`${fake.url}/v1/`, {
      anthropic_version: '2024-01-01',
      headers: { 'anthropic-beta': 'files-api-2025-04-14' },
    })
    await createAnthropicAdapter(provider).complete(request('text'), callContext(provider))
    const seen = fake.lastRequest()!
    expect(seen.path).toBe('/v1/messages')
    expect(seen.headers['anthropic-version']).toBe('2024-01-01')
    expect(seen.headers['anthropic-beta']).toBe('files-api-2025-04-14')
    expect(seen.body.stream).toBeUndefined()
  })

  test('recorded text response → content, stop, usage', async () => {
    const res = await complete('text')
    expect(res.id).toBe('chatcmpl-msg_01TestTextResponse')
    expect(res.object).toBe('chat.completion')
    expect(res.model).toBe('text')
    expect(Math.abs(res.created - Date.now() / 1000)).toBeLessThan(5)
    expect(res.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello!', refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ])
    expect(res.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 })
  })

  test('recorded tool response → tool_calls with the provider id, name and input as JSON', async () => {
    const recorded = await Bun.file(ANTHROPIC_FIXTURES.tool.json).json()
    const res = await complete('tool')
    const choice = res.choices[0]!
    expect(choice.finish_reason).toBe('tool_calls')
    expect(choice.message.content).toBeNull()
    expect(choice.message.tool_calls).toEqual([
      {
        id: 'toolu_01Q9ExVZnzZj7E2QQYHYtNUa',
        type: 'function',
        function: { name: 'json', arguments: JSON.stringify(recorded.content[0].input) },
      },
    ])
    expect(res.usage).toMatchObject({ prompt_tokens: 1151, completion_tokens: 87, total_tokens: 1238 })
  })

  test('two tool calls after thinking and text; cache tokens count as prompt tokens', async () => {
    const res = await complete('two-tools')
    const message = res.choices[0]!.message
    expect(message.content).toBe("I'll check both cities.")
    expect(message.reasoning_content).toBe('The user wants the weather in two cities.')
    expect(message.tool_calls?.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual(
      [
        ['toolu_01ParisWeather', 'get_weather', { city: 'Paris', unit: 'c' }],
        ['toolu_01LondonWeather', 'get_weather', { city: 'London' }],
      ],
    )
    expect(res.usage).toEqual({
      prompt_tokens: 325,
      completion_tokens: 89,
      total_tokens: 414,
      // 100 of them cache writes, kept apart for the cache_write price.
      prompt_tokens_details: { cached_tokens: 200, cache_write_tokens: 100 },
    })
  })

  test('recorded thinking response → the thinking block as reasoning_content, its signature dropped', async () => {
    const recorded = await Bun.file(ANTHROPIC_FIXTURES.thinking.json).json()
    const res = await complete('thinking')
    expect(res.choices[0]!.message).toEqual({
      role: 'assistant',
      content: recorded.content[1].text,
      reasoning_content: recorded.content[0].thinking,
      refusal: null,
    })
    expect(JSON.stringify(res)).not.toContain(recorded.content[0].signature)
  })
})

describe('Anthropic adapter, streaming', () => {
  test('asks for stream: true', async () => {
    await stream('text')
    expect(fake.lastRequest()!.body.stream).toBe(true)
  })

  test('recorded text stream → role first, text equal to the deltas, stop, usage chunk last', async () => {
    const { chunks, error } = await stream('text')
    expect(error).toBeUndefined()
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' })
    const out = assemble(chunks)
    expect(out.content).toBe(await recordedDeltas('text', 'text_delta'))
    expect(out.finish).toBe('stop')
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop')
    expect(chunks.at(-1)!.choices).toEqual([])
    expect(out.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 })
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(['chatcmpl-msg_01QC4g3HwBThD4BaNtBckFDJ']))
    expect(new Set(chunks.map((c) => c.created)).size).toBe(1)
  })

  test('recorded tool stream → one tool call with the provider id and the streamed JSON', async () => {
    const { chunks } = await stream('tool')
    const out = assemble(chunks)
    expect(out.tools).toEqual([
      {
        id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA',
        name: 'json',
        arguments: await recordedDeltas('tool', 'input_json_delta'),
      },
    ])
    expect(JSON.parse(out.tools[0]!.arguments)).toEqual({
      elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }],
    })
    const opening = chunks.find((c) => c.choices[0]?.delta.tool_calls)!.choices[0]!.delta.tool_calls![0]
    expect(opening).toEqual({
      index: 0,
      id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA',
      type: 'function',
      function: { name: 'json', arguments: '' },
    })
    expect(out.finish).toBe('tool_calls')
    expect(out.usage).toMatchObject({ prompt_tokens: 849, completion_tokens: 47, total_tokens: 896 })
  })

  test('two tool calls → indexes 0 and 1 (not block indexes), thinking as reasoning_content', async () => {
    const { chunks } = await stream('two-tools')
    const out = assemble(chunks)
    expect(out.content).toBe("I'll check both cities.")
    expect(out.reasoning).toBe('The user wants the weather in two cities.')
    expect(out.tools).toEqual([
      {
        id: 'toolu_01ParisWeather',
        name: 'get_weather',
        arguments: await recordedDeltas('two-tools', 'input_json_delta', 2),
      },
      {
        id: 'toolu_01LondonWeather',
        name: 'get_weather',
        arguments: await recordedDeltas('two-tools', 'input_json_delta', 3),
      },
    ])
    expect(out.tools.map((t) => JSON.parse(t.arguments))).toEqual([
      { city: 'Paris', unit: 'c' },
      { city: 'London' },
    ])
    expect(out.finish).toBe('tool_calls')
    expect(out.usage).toMatchObject({ prompt_tokens: 325, completion_tokens: 89, total_tokens: 414 })
  })

  test('recorded thinking stream → thinking_deltas as reasoning_content before the text; signatures dropped', async () => {
    const events = await readEvents(ANTHROPIC_FIXTURES.thinking.chunks)
    const { chunks } = await stream('thinking')
    const out = assemble(chunks)
    const deltas = (type: string) =>
      events
        .filter((e) => e.type === 'content_block_delta' && e.delta.type === type)
        .map((e) => e.delta.thinking ?? e.delta.text ?? e.delta.signature)
    expect(out.reasoning).toBe(deltas('thinking_delta').join(''))
    expect(out.reasoning).toBe(
      'The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185',
    )
    expect(out.content).toBe(deltas('text_delta').join(''))
    expect(out.reasoningFirst).toBe(true)
    expect(out.finish).toBe('stop')
    // One chunk per non-empty thinking_delta; the empty one and the signature_delta send nothing.
    expect(chunks.filter((c) => c.choices[0]?.delta.reasoning_content)).toHaveLength(9)
    expect(JSON.stringify(chunks)).not.toContain(deltas('signature_delta')[0])
  })

  test('cancelling the chunk stream cancels the upstream response', async () => {
    const slow = await startFakeAnthropic({ eventDelayMs: 40 })
    try {
      const provider = anthropicProvider(slow.url)
      const s = planItems(
        await createAnthropicAdapter(provider).stream(request('text'), callContext(provider)),
      )
      const reader = s.getReader()
      expect((await reader.read()).value?.choices[0]?.delta.role).toBe('assistant')
      await reader.cancel()
      for (let i = 0; i < 50 && slow.cancelledStreams() === 0; i++) await Bun.sleep(10)
      expect(slow.cancelledStreams()).toBe(1)
    } finally {
      await slow.stop()
    }
  })

  test('aborting the call signal mid-stream errors the stream and cancels the upstream', async () => {
    const slow = await startFakeAnthropic({ eventDelayMs: 40 })
    try {
      const provider = anthropicProvider(slow.url)
      const abort = new AbortController()
      const s = planItems(
        await createAnthropicAdapter(provider).stream(request('text'), callContext(provider, abort.signal)),
      )
      setTimeout(() => abort.abort(), 60)
      const { error } = await drain(s)
      expect(error).toBeDefined()
      for (let i = 0; i < 50 && slow.cancelledStreams() === 0; i++) await Bun.sleep(10)
      expect(slow.cancelledStreams()).toBe(1)
    } finally {
      await slow.stop()
    }
  })
})
