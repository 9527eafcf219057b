/**
 * Every body and every stream event the gateway sends, read raw over HTTP, validates against
 * OpenAI's published schemas (CreateChatCompletionResponse, CreateChatCompletionStreamResponse,
 * ErrorResponse), and streams are framed as OpenAI frames them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  type ChatBed,
  expectError,
  type RawStream,
  readSSE,
  startChatBed,
  UPSTREAM_MODEL,
  userMessage,
  WEATHER_TOOLS,
} from '../../../support/chat-bed.ts'
import { validateChunk, validateError, validateResponse } from '../../../support/openai-schemas.ts'

let bed: ChatBed
beforeAll(async () => {
  bed = await startChatBed()
})
afterAll(() => bed.stop())

const MODEL = `mock/${UPSTREAM_MODEL}`

/** Each data event is a valid chunk, or (only as the last one) a valid error body. */
function expectValidEvents(s: RawStream, model: string): void {
  for (const [i, event] of s.events.entries()) {
    if ('error' in event) {
      expect(i).toBe(s.events.length - 1)
      expect(validateError(event)).toBeNull()
      continue
    }
    expect({ i, errors: validateChunk(event) }).toEqual({ i, errors: null })
    expect(event.model).toBe(model)
  }
}

type Choice = { index: number; delta: Record<string, unknown>; finish_reason: string | null }
const choicesOf = (s: RawStream) => s.events.flatMap((e) => (e.choices as Choice[] | undefined) ?? [])

async function json(body: Record<string, unknown>) {
  const res = await bed.post(body)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toStartWith('application/json')
  expect(res.headers.get('x-request-id')).toBeTruthy()
  const obj = (await res.json()) as Record<string, unknown>
  expect(validateResponse(obj)).toBeNull()
  return obj
}

async function sse(body: Record<string, unknown>) {
  const res = await bed.post({ ...body, stream: true })
  expect(res.status).toBe(200)
  expect(res.headers.get('x-request-id')).toBeTruthy()
  const s = await readSSE(res)
  expectValidEvents(s, String(body.model))
  return s
}

describe('responses validate against OpenAI schemas', () => {
  test('non-streaming: text and tool-call completions, mock and demo providers', async () => {
    const text = await json({ model: MODEL, messages: userMessage() })
    expect(text.model).toBe(MODEL)
    const tools = await json({ model: MODEL, messages: userMessage(), tools: WEATHER_TOOLS })
    expect((tools.choices as Array<{ finish_reason: string }>)[0]!.finish_reason).toBe('tool_calls')
    await json({ model: 'demo/echo', messages: userMessage() })
    await json({
      model: 'demo/echo',
      messages: userMessage('call get_weather {"location":"Paris"}'),
      tools: WEATHER_TOOLS,
    })
    await json({
      model: 'demo/echo',
      messages: userMessage('{"a":1}'),
      response_format: { type: 'json_object' },
    })
  })

  test('text stream: role first, content deltas, finish_reason on the last choice chunk, [DONE]', async () => {
    const s = await sse({ model: MODEL, messages: userMessage() })
    expect(s.done).toBe(true)
    const choices = choicesOf(s)
    expect(choices[0]!.delta.role).toBe('assistant')
    expect(choices.map((c) => c.delta.content ?? '').join('')).toBe('Hello from the mock')
    expect(choices.slice(0, -1).every((c) => c.finish_reason === null)).toBe(true)
    expect(choices.at(-1)!.finish_reason).toBe('stop')
    // Without include_usage no chunk has a usage key at all, as OpenAI sends it.
    expect(s.events.every((e) => !('usage' in e))).toBe(true)
    // ... nor is the upstream's usage chunk (the gateway always asks for one) passed on.
    expect(s.events.every((e) => (e.choices as unknown[]).length > 0)).toBe(true)
  })

  test('include_usage: usage null on every chunk, then a final choices:[] usage chunk', async () => {
    const s = await sse({ model: MODEL, messages: userMessage(), stream_options: { include_usage: true } })
    expect(s.done).toBe(true)
    const last = s.events.at(-1)!
    expect(last.choices).toEqual([])
    expect(last.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 })
    expect(s.events.slice(0, -1).every((e) => e.usage === null)).toBe(true)
  })

  test('tool-call stream: deltas carry index, the first of each call has id, type and name', async () => {
    const s = await sse({
      model: MODEL,
      messages: userMessage(),
      tools: WEATHER_TOOLS,
      stream_options: { include_usage: true },
    })
    const calls = choicesOf(s).flatMap(
      (c) => (c.delta.tool_calls as Array<Record<string, unknown>> | undefined) ?? [],
    )
    expect(calls.every((c) => typeof c.index === 'number')).toBe(true)
    const heads = calls.filter((c) => c.id !== undefined)
    expect(heads.map((c) => [c.index, c.id, c.type])).toEqual([
      [0, 'call_mock_0', 'function'],
      [1, 'call_mock_1', 'function'],
    ])
    expect(choicesOf(s).at(-1)!.finish_reason).toBe('tool_calls')
  })

  test('demo streams (text, tool call, n=2) validate too', async () => {
    await sse({ model: 'demo/echo', messages: userMessage() })
    await sse({
      model: 'demo/echo',
      messages: userMessage('get_weather {"location":"Oslo"}'),
      tools: WEATHER_TOOLS,
      stream_options: { include_usage: true },
    })
    const two = await sse({ model: 'demo/echo-pro', messages: userMessage(), n: 2 })
    expect(new Set(choicesOf(two).map((c) => c.index))).toEqual(new Set([0, 1]))
  })

  test('keep-alives while the upstream is silent are SSE comments, never data', async () => {
    const s = await sse({ model: 'mock/slow-first-1000ms', messages: userMessage() })
    expect(s.comments).toBeGreaterThan(0)
    const firstData = s.items.findIndex((i) => 'data' in i)
    expect(s.items.slice(0, firstData).every((i) => 'comment' in i)).toBe(true)
    expect(s.done).toBe(true)
    expect(
      choicesOf(s)
        .map((c) => c.delta.content ?? '')
        .join(''),
    ).toBe('Hello from the mock')
  })
})

describe('errors validate as ErrorResponse', () => {
  test('gateway refusals (400, 401, 404, 415) and upstream failures (502, 504)', async () => {
    const cases: Array<[Record<string, unknown> | string, number, string, Record<string, string>?]> = [
      ['{"model":', 400, 'invalid_json'],
      [{ model: MODEL }, 400, 'missing_required_parameter'],
      [{ model: 'gpt-4o-mini', messages: userMessage() }, 400, 'invalid_model'],
      [{ model: 'mock/nope', messages: userMessage() }, 404, 'model_not_found'],
      [{ model: 'mock/bare', messages: userMessage(), n: 2 }, 400, 'unsupported_feature'],
      [{ model: MODEL, messages: userMessage() }, 401, 'invalid_api_key', { authorization: 'Bearer nope' }],
      [
        { model: MODEL, messages: userMessage() },
        415,
        'unsupported_media_type',
        { 'content-type': 'text/plain' },
      ],
      [{ model: 'mock/fault-500', messages: userMessage() }, 502, 'upstream_error'],
      [{ model: 'mock/fault-500', messages: userMessage(), stream: true }, 502, 'upstream_error'],
      [{ model: 'mockt/hang', messages: userMessage() }, 504, 'upstream_timeout'],
      [{ model: 'dead/gpt-4o-mini', messages: userMessage(), stream: true }, 502, 'upstream_unreachable'],
    ]
    for (const [body, status, code, headers] of cases)
      await expectError(await bed.post(body, headers), status, code)
  })

  test('an error event ending a stream validates, and no [DONE] follows it', async () => {
    for (const model of ['mock/fault-error-event', 'mock/fault-cut-stream']) {
      const s = await sse({ model, messages: userMessage() })
      expect(s.done).toBe(false)
      expect('error' in s.events.at(-1)!).toBe(true)
      expect(s.events.length).toBe(3)
    }
  })
})
