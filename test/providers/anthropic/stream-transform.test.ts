import { describe, expect, test } from 'bun:test'
import { anthropicStreamTransform } from '../../../src/providers/anthropic/anthropic-stream-transform.ts'
import type { SSEEvent } from '../../../src/providers/sse/index.ts'
import { validateChunk } from '../../support/openai-schemas.ts'
import { anthropicProvider, assemble, drain } from './helpers.ts'

const START = {
  type: 'message_start',
  message: { id: 'msg_1', usage: { input_tokens: 3, output_tokens: 1 } },
}
const STOP = { type: 'message_stop' }
const delta = (reason: string, output = 2) => ({
  type: 'message_delta',
  delta: { stop_reason: reason },
  usage: { output_tokens: output },
})

async function run(events: Array<object | string>) {
  const source = new ReadableStream<SSEEvent>({
    start(controller) {
      for (const e of events) controller.enqueue({ data: typeof e === 'string' ? e : JSON.stringify(e) })
      controller.close()
    },
  })
  const out = await drain(
    source.pipeThrough(
      anthropicStreamTransform({ model: 'claude-x', provider: anthropicProvider('http://x') }),
    ),
  )
  for (const chunk of out.chunks) expect(validateChunk(chunk)).toBeNull()
  return out
}

describe('anthropicStreamTransform', () => {
  test('a tool_use block whose input came whole (no input_json_delta) still gets its arguments', async () => {
    const { chunks } = await run([
      START,
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_a', name: 'now', input: {} },
      },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_b', name: 'f', input: { x: 1 } },
      },
      { type: 'content_block_stop', index: 1 },
      delta('tool_use'),
      STOP,
    ])
    expect(assemble(chunks).tools).toEqual([
      { id: 'toolu_a', name: 'now', arguments: '{}' },
      { id: 'toolu_b', name: 'f', arguments: '{"x":1}' },
    ])
  })

  test('the role goes out with the first block: content null before thinking or a call, "" before text or at an empty end', async () => {
    const first = async (events: object[]) =>
      (await run([START, ...events, delta('end_turn'), STOP])).chunks[0]!
    const thinking = {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '' },
    }
    const text = { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }
    expect((await first([thinking])).choices[0]!.delta).toEqual({ role: 'assistant', content: null })
    expect((await first([text])).choices[0]!.delta).toEqual({ role: 'assistant', content: '' })
    expect((await first([])).choices[0]!.delta).toEqual({ role: 'assistant', content: '' })
  })

  test.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'stop'],
    ['brand_new_reason', 'stop'],
  ])('stop_reason %s → %s', async (reason, finish) => {
    const { chunks } = await run([START, delta(reason), STOP])
    expect(assemble(chunks).finish).toBe(finish)
  })

  test('usage: input from message_start, output from the last message_delta, cache tokens added', async () => {
    const { chunks } = await run([
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          usage: {
            input_tokens: 5,
            cache_creation_input_tokens: 7,
            cache_read_input_tokens: 11,
            output_tokens: 1,
          },
        },
      },
      delta('end_turn', 4),
      delta('end_turn', 9),
      STOP,
    ])
    expect(chunks.at(-1)!.usage).toEqual({
      prompt_tokens: 23,
      completion_tokens: 9,
      total_tokens: 32,
      // Cache writes kept apart: the model's cache_write price bills them.
      prompt_tokens_details: { cached_tokens: 11, cache_write_tokens: 7 },
    })
  })

  test('events after message_stop are ignored', async () => {
    const { chunks, error } = await run([
      START,
      delta('end_turn'),
      STOP,
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'late' } },
    ])
    expect(error).toBeUndefined()
    expect(assemble(chunks).content).toBe('')
  })

  test('an event that is not JSON is skipped and counted (DESIGN §10); a stream of nothing else → 502 upstream_invalid_response', async () => {
    const { error } = await run(['not json'])
    expect(error).toMatchObject({ status: 502, code: 'upstream_invalid_response' })
    const cut = await run([START, 'not json'])
    expect(cut.error).toMatchObject({ status: 502, code: 'upstream_stream_interrupted' })
  })

  test('an error event before anything else errors the stream with no chunk (the gateway can still answer with its status)', async () => {
    const { chunks, error } = await run([
      { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } },
    ])
    expect(chunks).toEqual([])
    expect(error).toMatchObject({ status: 429, code: 'upstream_rate_limited' })
  })
})
