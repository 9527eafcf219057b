/**
 * The Responses encoders on hand-made chat chunks and completions, for the paths the recorded
 * providers do not take: reasoning text (`reasoning_content`), refusals, a `length` finish
 * (`response.incomplete`), a failure after the first byte, interleaved tool calls. Every event and
 * object is checked against OpenAI's published schema; the pass-through field edit is checked on
 * tricky JSON.
 */
import { describe, expect, test } from 'bun:test'
import { replaceStringField } from '../../../src/json/fields.ts'
import type { ChatCompletion, ChatCompletionChunk } from '../../../src/operations/chat.ts'
import { encodeResponse } from '../../../src/surfaces/responses/encode-response.ts'
import { ResponsesStreamEncoder } from '../../../src/surfaces/responses/stream-encoder.ts'
import { decodeView } from '../../../src/surfaces/responses/view.ts'
import { GatewayError } from '../../../src/util/errors.ts'
import { relaxed, validateEvent, validateResponseObject } from '../../support/responses-schemas.ts'

const ctx = (body: Record<string, unknown> = {}) => ({
  view: decodeView(JSON.stringify({ model: 'demo/echo', input: 'hi', ...body })),
  modelId: 'demo/echo',
})

const chunk = (
  delta: Record<string, unknown>,
  finish: string | null = null,
  usage?: unknown,
): ChatCompletionChunk =>
  ({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  }) as ChatCompletionChunk

const USAGE = {
  prompt_tokens: 10,
  completion_tokens: 7,
  total_tokens: 17,
  prompt_tokens_details: { cached_tokens: 4 },
  completion_tokens_details: { reasoning_tokens: 5 },
}

function run(enc: ResponsesStreamEncoder, chunks: ChatCompletionChunk[]) {
  const events = [...chunks.flatMap((c) => enc.events(c)), ...enc.endEvents()]
  events.forEach((event, i) => {
    expect(validateEvent(event)).toBeNull()
    expect(event.sequence_number).toBe(i)
  })
  return events
}

describe('stream encoder', () => {
  test('reasoning text becomes a reasoning item with a summary; reasoning tokens reach usage', () => {
    const enc = new ResponsesStreamEncoder(ctx())
    const events = run(enc, [
      chunk({ role: 'assistant', reasoning_content: 'Think' }),
      chunk({ reasoning_content: 'ing.' }),
      chunk({ content: 'Answer' }),
      chunk({}, 'stop'),
      chunk({}, null, USAGE),
    ])
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    const res = events.at(-1)!.response as any
    expect(res.output[0]).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Thinking.' }],
    })
    expect(res.usage).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 5 },
      total_tokens: 17,
    })
    expect(enc.usage()).toEqual(USAGE)
  })

  test('a refusal streams as refusal deltas in a message', () => {
    const events = run(new ResponsesStreamEncoder(ctx()), [chunk({ refusal: 'No.' }), chunk({}, 'stop')])
    expect(events.map((e) => e.type)).toContain('response.refusal.delta')
    expect((events.at(-1)!.response as any).output[0].content[0]).toEqual({ type: 'refusal', refusal: 'No.' })
  })

  test('finish_reason length → response.incomplete with reason max_output_tokens', () => {
    const events = run(new ResponsesStreamEncoder(ctx()), [chunk({ content: 'cut' }), chunk({}, 'length')])
    expect(events.at(-1)!.type).toBe('response.incomplete')
    expect((events.at(-1)!.response as any).incomplete_details).toEqual({ reason: 'max_output_tokens' })
    // The item the limit cut is `incomplete` too, in its done event and in the final response.
    const done = events.find((e) => e.type === 'response.output_item.done')!
    expect((done.item as any).status).toBe('incomplete')
    expect((events.at(-1)!.response as any).output[0].status).toBe('incomplete')
  })

  test('finish_reason length, not streamed: the last item incomplete, earlier ones completed', () => {
    const res = encodeResponse(
      {
        id: 'c1',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Let me look.',
              tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'a', arguments: '{"x' } }],
            },
            finish_reason: 'length',
          },
        ],
      } as any,
      ctx({ tools: [{ type: 'function', name: 'a', parameters: { type: 'object' } }] }),
    )
    expect(res.status).toBe('incomplete')
    expect(res.output.map((i) => i.status)).toEqual(['completed', 'incomplete'])
    validateResponseObject(res)
  })

  test('two tool calls: each its own function_call item, arguments done with the name', () => {
    const events = run(new ResponsesStreamEncoder(ctx()), [
      chunk({
        tool_calls: [
          { index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '{"x"' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
      chunk({
        tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'b', arguments: '{}' } }],
      }),
      chunk({}, 'tool_calls'),
    ])
    const done = events.filter((e) => e.type === 'response.function_call_arguments.done')
    expect(done.map((e) => [e.name, e.arguments])).toEqual([
      ['a', '{"x":1}'],
      ['b', '{}'],
    ])
    const output = (events.at(-1)!.response as any).output
    expect(output.map((i: any) => [i.type, i.call_id, i.status])).toEqual([
      ['function_call', 'call_a', 'completed'],
      ['function_call', 'call_b', 'completed'],
    ])
  })

  test('tool calls whose chunks interleave by index: each call whole, under its own id (as the JSON path gives)', () => {
    const events = run(new ResponsesStreamEncoder(ctx()), [
      chunk({
        tool_calls: [
          { index: 0, id: 'call_A', type: 'function', function: { name: 'a', arguments: '' } },
          { index: 1, id: 'call_B', type: 'function', function: { name: 'b', arguments: '' } },
        ],
      }),
      chunk({
        tool_calls: [
          { index: 0, function: { arguments: '{"x":1}' } },
          { index: 1, function: { arguments: '{"y":2}' } },
        ],
      }),
      chunk({}, 'tool_calls'),
    ])
    const output = (events.at(-1)!.response as any).output
    expect(output.map((i: any) => [i.call_id, i.name, i.arguments, i.status])).toEqual([
      ['call_A', 'a', '{"x":1}', 'completed'],
      ['call_B', 'b', '{"y":2}', 'completed'],
    ])
    // Each item once, added then done, in order.
    const items = events
      .filter((e) => e.type === 'response.output_item.done')
      .map((e) => (e.item as any).call_id)
    expect(items).toEqual(['call_A', 'call_B'])
  })

  test('a failure after the first byte → error, then response.failed, numbering continued', () => {
    const enc = new ResponsesStreamEncoder(ctx())
    const first = enc.events(chunk({ content: 'par' }))
    const tail = enc.failEvents(new GatewayError(502, 'upstream_stream_interrupted', 'cut'))
    // The error event nests its fields as the live API does (the one deviation `relaxed` undoes).
    for (const event of tail) expect(validateEvent(relaxed(event))).toBeNull()
    expect(tail.map((e) => e.type)).toEqual(['error', 'response.failed'])
    expect(tail[0]!.error).toEqual({
      message: 'cut',
      type: 'upstream_error',
      param: null,
      code: 'upstream_stream_interrupted',
    })
    expect(tail[0]!.sequence_number).toBe(first.length)
    expect((tail[1]!.response as any).error).toEqual({ code: 'server_error', message: 'cut' })
  })

  test('bytes are framed as event: <type> / data: <json>', () => {
    const text = new TextDecoder().decode(new ResponsesStreamEncoder(ctx()).end())
    expect(text.split('\n\n')[0]).toStartWith('event: response.created\ndata: {"type":"response.created"')
  })
})

describe('non-stream encoder', () => {
  test('text, reasoning and tool calls become output items of a valid Response', () => {
    const res = encodeResponse(
      {
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Hi',
              refusal: null,
              reasoning_content: 'Hmm',
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
            },
            finish_reason: 'tool_calls',
            logprobs: null,
          },
        ],
        usage: USAGE,
      },
      ctx({ instructions: 'Be brief', metadata: { a: 'b' } }),
    )
    expect(validateResponseObject(res)).toBeNull()
    expect(res.output.map((i) => i.type)).toEqual(['reasoning', 'message', 'function_call'])
    expect(res).toMatchObject({
      instructions: 'Be brief',
      metadata: { a: 'b' },
      store: false,
      model: 'demo/echo',
    })
  })
})

describe('replaceStringField (pass-through model swap)', () => {
  test('only the field at the given depth changes; strings and deeper keys are untouched', () => {
    const json =
      '{"type":"response.created","response":{"instructions":"say \\"model\\":\\"x\\"","metadata":{"model":"keep"},"model" : "gpt-5","tools":[{"model":"keep"}]},"sequence_number":0}'
    expect(replaceStringField(json, 2, 'model', 'openai/gpt-5')).toBe(
      json.replace('"model" : "gpt-5"', '"model" : "openai/gpt-5"'),
    )
    expect(replaceStringField('{"a":1}', 1, 'model', 'x')).toBe('{"a":1}')
  })
})

/**
 * `service_tier`: OpenAI's chat completion and each of its chunks name the tier that served the
 * request; the Response reports it at the end (`response.completed`, the JSON object), and the tier
 * asked of the upstream before (`response.created`, as OpenAI's Responses stream does). An upstream
 * that names none (Anthropic, Gemini, a compatible server) leaves today's `default`.
 */
describe('service_tier', () => {
  const tiered = (c: ChatCompletionChunk, tier: unknown) =>
    ({ ...c, service_tier: tier }) as ChatCompletionChunk
  const asked = (tier?: string) => {
    const c = ctx(tier ? { service_tier: tier } : {})
    c.view.tier = tier // as translateView sets it for an openai upstream
    return c
  }
  const completion = (tier?: unknown): ChatCompletion => ({
    id: 'x',
    object: 'chat.completion' as const,
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: 'Hi', refusal: null },
        finish_reason: 'stop' as const,
        logprobs: null,
      },
    ],
    usage: USAGE,
    // Any JSON a compatible server sends, not only a tier's name.
    ...(tier === undefined ? {} : { service_tier: tier as string }),
  })
  const tiers = (events: ReturnType<typeof run>) =>
    events.filter((e) => e.response).map((e) => [e.type, (e.response as any).service_tier])

  test('streamed: created and in_progress report the tier asked, completed the tier each chunk names', () => {
    const events = run(new ResponsesStreamEncoder(asked('auto')), [
      tiered(chunk({ role: 'assistant', content: 'Hi' }), 'flex'),
      tiered(chunk({}, 'stop'), 'flex'),
      tiered(chunk({}, null, USAGE), 'flex'),
    ])
    expect(tiers(events)).toEqual([
      ['response.created', 'auto'],
      ['response.in_progress', 'auto'],
      ['response.completed', 'flex'],
    ])
  })

  test('streamed: response.incomplete reports the served tier too; the latest chunk wins', () => {
    const events = run(new ResponsesStreamEncoder(asked()), [
      tiered(chunk({ content: 'Hi' }), 'default'),
      tiered(chunk({}, 'length'), 'priority'),
    ])
    expect(tiers(events)).toEqual([
      ['response.created', 'default'],
      ['response.in_progress', 'default'],
      ['response.incomplete', 'priority'],
    ])
  })

  test('streamed, failed after the first byte: response.failed reports the tier named so far', () => {
    const enc = new ResponsesStreamEncoder(asked('flex'))
    enc.events(tiered(chunk({ content: 'par' }), 'default'))
    const tail = enc.failEvents(new GatewayError(502, 'upstream_stream_interrupted', 'cut'))
    expect((tail[1]!.response as any).service_tier).toBe('default')
  })

  test('streamed, no tier named (anthropic, gemini, demo, a compatible server): default throughout', () => {
    const events = run(new ResponsesStreamEncoder(ctx()), [
      chunk({ content: 'Hi' }),
      tiered(chunk({}, 'stop'), null),
      chunk({}, null, USAGE),
    ])
    expect(tiers(events).map(([, tier]) => tier)).toEqual(['default', 'default', 'default'])
  })

  test('streamed, a tier asked but none named back: default at the end, as before', () => {
    const events = run(new ResponsesStreamEncoder(asked('flex')), [chunk({ content: 'Hi' }, 'stop')])
    expect(tiers(events).map(([, tier]) => tier)).toEqual(['flex', 'flex', 'default'])
  })

  test('JSON: the tier the completion names; default when it names none (or not a string)', () => {
    const served = encodeResponse(completion('flex'), asked('auto'))
    expect(validateResponseObject(served)).toBeNull()
    expect(served.service_tier).toBe('flex')
    expect(encodeResponse(completion(), ctx()).service_tier).toBe('default')
    expect(encodeResponse(completion(null), asked('flex')).service_tier).toBe('default')
    expect(encodeResponse(completion(7), ctx()).service_tier).toBe('default')
  })
})
