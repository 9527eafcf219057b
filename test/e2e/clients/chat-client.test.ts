/**
 * The official `openai` client against the real gateway and the real mock upstream: completions,
 * streams, tool calls rebuilt by the client's own stream helper, and errors as its typed classes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI, { type APIError } from 'openai'
import type { ChatCompletion } from 'openai/resources/chat/completions'
import {
  type ChatBed,
  startChatBed,
  UPSTREAM_KEY,
  UPSTREAM_MODEL,
  userMessage,
  WEATHER_TOOLS,
} from '../../support/chat-bed.ts'
import { beforeEach } from '../../support/hooks.ts'

let bed: ChatBed
beforeAll(async () => {
  bed = await startChatBed()
})
afterAll(() => bed.stop())
beforeEach(() => bed.mock.reset())

const MODEL = `mock/${UPSTREAM_MODEL}`

/** What the mock itself answers to `body` (non-streamed): the ground truth for comparisons. */
async function upstreamAnswer(body: Record<string, unknown>): Promise<ChatCompletion> {
  const res = await fetch(`${bed.mock.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, model: UPSTREAM_MODEL, stream: false }),
  })
  return (await res.json()) as ChatCompletion
}

/** The error a client call rejects with. */
async function rejection(p: Promise<unknown>): Promise<APIError> {
  const err = await p.then(
    () => {
      throw new Error('expected the call to fail')
    },
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(OpenAI.APIError)
  expect(JSON.stringify(err)).not.toContain(UPSTREAM_KEY)
  expect((err as APIError).message).not.toContain(UPSTREAM_KEY)
  return err as APIError
}

describe('openai client → gateway → mock upstream', () => {
  test('non-streaming completion: the upstream answer with the prefixed model id', async () => {
    const { data, response } = await bed
      .client()
      .chat.completions.create({ model: MODEL, messages: userMessage() })
      .withResponse()
    expect(response.status).toBe(200)
    expect(response.headers.get('x-request-id')).toMatch(/^req_/)
    expect(data.model).toBe(MODEL)
    expect(data.object).toBe('chat.completion')
    expect(data.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Hello from the mock' })
    expect(data.choices[0]!.finish_reason).toBe('stop')
    expect(data.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 })
    // The upstream got its own model name and the provider's key, not the client's.
    expect(bed.mock.stats.requests).toBe(1)
    expect(bed.mock.stats.lastBody).toMatchObject({ model: UPSTREAM_MODEL, messages: userMessage() })
    expect(bed.mock.stats.lastHeaders.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)
  })

  test('streaming with for await: role first, every content delta, finish_reason, no usage unasked', async () => {
    const stream = await bed.client().chat.completions.create({
      model: MODEL,
      messages: userMessage(),
      stream: true,
    })
    const chunks: OpenAI.ChatCompletionChunk[] = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks.length).toBe(6) // role, 4 words, finish
    expect(chunks.every((c) => c.model === MODEL && c.object === 'chat.completion.chunk')).toBe(true)
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant')
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello from the mock')
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop')
    expect(chunks.some((c) => c.usage)).toBe(false)
    expect(bed.mock.stats.streams).toBe(1)
  })

  test('streaming with include_usage: a final choices:[] chunk carries the upstream usage', async () => {
    const stream = await bed.client().chat.completions.create({
      model: MODEL,
      messages: userMessage(),
      stream: true,
      stream_options: { include_usage: true },
    })
    const chunks: OpenAI.ChatCompletionChunk[] = []
    for await (const chunk of stream) chunks.push(chunk)
    const last = chunks.at(-1)!
    expect(last.choices).toEqual([])
    expect(last.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 })
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true)
  })

  test("tool calls rebuilt by the client's stream helper equal the upstream's (ids, names, arguments)", async () => {
    const request = {
      model: MODEL,
      messages: userMessage('Weather in Paris and the time in Tokyo?'),
      tools: WEATHER_TOOLS,
      parallel_tool_calls: true,
    }
    const expected = (await upstreamAnswer(request)).choices[0]!.message.tool_calls!
    expect(expected.length).toBe(2)

    const runner = bed.client().chat.completions.stream(request)
    const deltas: string[] = []
    runner.on('tool_calls.function.arguments.delta', (e) => deltas.push(e.arguments_delta))
    const final = await runner.finalChatCompletion()
    expect(final.model).toBe(MODEL)
    expect(final.choices[0]!.finish_reason).toBe('tool_calls')
    const calls = final.choices[0]!.message.tool_calls!
    const pick = (c: (typeof calls)[number]) =>
      c.type === 'function'
        ? { id: c.id, type: c.type, name: c.function.name, arguments: c.function.arguments }
        : c
    expect(calls.map(pick)).toEqual(expected.map(pick))
    // The arguments really came in fragments, and the client parsed them as JSON.
    expect(deltas.length).toBeGreaterThan(2)
    const first = calls[0]!
    if (first.type === 'function')
      expect(JSON.parse(first.function.arguments)).toEqual({ location: 'Paris', unit: 'celsius' })
    expect(bed.mock.stats.lastBody).toMatchObject({
      tools: WEATHER_TOOLS,
      parallel_tool_calls: true,
      stream: true,
    })

    // Non-streamed, the same calls come back unchanged.
    const plain = await bed.client().chat.completions.create(request)
    expect(plain.choices[0]!.message.tool_calls!.map(pick)).toEqual(expected.map(pick))
  })
})

describe('errors surface as the client typed errors', () => {
  test('400 BadRequestError: no prefix, and an unsupported feature (with code and param)', async () => {
    const noPrefix = await rejection(
      bed.client().chat.completions.create({ model: UPSTREAM_MODEL, messages: userMessage() }),
    )
    expect(noPrefix).toBeInstanceOf(OpenAI.BadRequestError)
    expect([noPrefix.status, noPrefix.code, noPrefix.param]).toEqual([400, 'invalid_model', 'model'])
    const feature = await rejection(
      bed.client().chat.completions.create({ model: 'mock/bare', messages: userMessage(), stream: true }),
    )
    expect(feature).toBeInstanceOf(OpenAI.BadRequestError)
    expect([feature.code, feature.param]).toEqual(['unsupported_feature', 'stream'])
    expect(feature.requestID).toMatch(/^req_/)
    expect(bed.mock.stats.requests).toBe(0)
  })

  test('401 AuthenticationError for an unknown key', async () => {
    const err = await rejection(
      bed.client('sk-sy-notakey').chat.completions.create({ model: MODEL, messages: userMessage() }),
    )
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError)
    expect([err.status, err.code]).toEqual([401, 'invalid_api_key'])
  })

  test('403 PermissionDeniedError: a model outside the plan, and a disabled key', async () => {
    const { key: freeKey } = await bed.gw.key('e2e-free', 'free')
    const notInPlan = await rejection(
      bed.client(freeKey).chat.completions.create({ model: MODEL, messages: userMessage() }),
    )
    expect(notInPlan).toBeInstanceOf(OpenAI.PermissionDeniedError)
    expect([notInPlan.status, notInPlan.code]).toEqual([403, 'model_not_in_plan'])

    const { key, id } = await bed.gw.key('e2e-disabled', 'unlimited')
    await bed.gw.deps.accounts.setKeyState(id, 'disabled')
    const disabled = await rejection(
      bed.client(key).chat.completions.create({ model: MODEL, messages: userMessage() }),
    )
    expect(disabled).toBeInstanceOf(OpenAI.PermissionDeniedError)
    expect(disabled.code).toBe('key_disabled')
    expect(bed.mock.stats.requests).toBe(0)
  })

  test('404 NotFoundError for an unknown model or prefix', async () => {
    for (const model of ['mock/no-such-model', 'nowhere/gpt-4o-mini']) {
      const err = await rejection(bed.client().chat.completions.create({ model, messages: userMessage() }))
      expect(err).toBeInstanceOf(OpenAI.NotFoundError)
      expect([err.status, err.code]).toEqual([404, 'model_not_found'])
    }
  })

  test('upstream 429 → RateLimitError with the upstream retry-after, streaming or not', async () => {
    const client = bed.client()
    for (const stream of [false, true]) {
      const err = await rejection(
        client.chat.completions.create({ model: 'mock/fault-429', messages: userMessage(), stream }),
      )
      expect(err).toBeInstanceOf(OpenAI.RateLimitError)
      expect([err.status, err.code]).toEqual([429, 'upstream_rate_limited'])
      expect(err.headers?.get('retry-after')).toBe('7')
    }
  })

  test('upstream 500 → InternalServerError 502 upstream_error, streaming or not', async () => {
    for (const stream of [false, true]) {
      const err = await rejection(
        bed.client().chat.completions.create({ model: 'mock/fault-500', messages: userMessage(), stream }),
      )
      expect(err).toBeInstanceOf(OpenAI.InternalServerError)
      expect([err.status, err.code]).toEqual([502, 'upstream_error'])
    }
  })

  test('an upstream 400 keeps its status; the key it echoed is redacted', async () => {
    const err = await rejection(
      bed.client().chat.completions.create({ model: 'mock/fault-400', messages: userMessage() }),
    )
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(err.message).toContain('rejected by the mock')
    // The mock echoed the provider key in its message; the gateway must not pass it on.
    expect(err.message).not.toContain('upstream-secret')
  })

  test('an error event mid-stream → the for-await loop throws APIError after the first chunks', async () => {
    const stream = await bed.client().chat.completions.create({
      model: 'mock/fault-error-event',
      messages: userMessage(),
      stream: true,
    })
    const seen: string[] = []
    const err = await (async () => {
      for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '')
    })().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(seen.length).toBe(2)
    expect(err).toBeInstanceOf(OpenAI.APIError)
    expect((err as APIError).message).toContain('The server had an error')
    expect((err as APIError).code).toBe('upstream_error')
  })

  test('after all of that, the next request is answered normally', async () => {
    const res = await bed.client().chat.completions.create({ model: MODEL, messages: userMessage() })
    expect(res.choices[0]!.message.content).toBe('Hello from the mock')
  })
})
