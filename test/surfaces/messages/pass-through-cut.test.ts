/**
 * The pieces of the cut on the Messages pass-through: the event framer (events whole, as they
 * came, whatever the chunking; CRLF re-framed), the gate (counts text, thinking and tool input;
 * ends the open blocks and the message as max_tokens), and the assembly of a JSON message.
 */
import { describe, expect, test } from 'bun:test'
import type { ProviderConfig } from '../../../src/config/schema.ts'
import { OutputAllowance } from '../../../src/pipeline/output-allowance.ts'
import type { EncodeContext } from '../../../src/pipeline/surface.ts'
import { eventFrames } from '../../../src/providers/sse/event-frames.ts'
import { assembleMessage, MessagesCutGate } from '../../../src/surfaces/messages/pass-through-cut.ts'
import type { MessagesRequest } from '../../../src/surfaces/messages/request-schema.ts'

const enc = new TextEncoder()
const dec = new TextDecoder()
const ev = (type: string, o: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`

/** Runs `chunks` through the framer: the events it enqueued, decoded. */
function frames(chunks: string[], max = 1_000): string[] {
  const stage = eventFrames(max, 'ant')
  const out: string[] = []
  const controller = { enqueue: (b: Uint8Array) => out.push(dec.decode(b)) } as never
  for (const c of chunks) stage.transform!(enc.encode(c), controller)
  stage.flush!(controller)
  return out
}

describe('eventFrames', () => {
  test('one event an item, whatever the chunking, bytes as they came', () => {
    const a = ev('ping', {})
    const b = ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hi' } })
    const whole = a + b
    for (let cut = 1; cut < whole.length; cut++)
      expect(frames([whole.slice(0, cut), whole.slice(cut)])).toEqual([a, b])
  })

  test('CRLF and CR line ends are re-framed as LF, also split across chunks', () => {
    const crlf = 'event: ping\r\ndata: {}\r\n\r\nevent: ping\rdata: {}\r\r'
    const want = ['event: ping\ndata: {}\n\n', 'event: ping\ndata: {}\n\n']
    for (let cut = 1; cut < crlf.length; cut++)
      expect(frames([crlf.slice(0, cut), crlf.slice(cut)])).toEqual(want)
  })

  test('an event past the limit is refused', () => {
    expect(() => frames([`data: ${'x'.repeat(100)}`], 50)).toThrow(/larger than 50 bytes/)
  })
})

const START = ev('message_start', {
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-up',
    content: [],
    usage: { input_tokens: 9, output_tokens: 1 },
  },
})

describe('MessagesCutGate', () => {
  test('counts thinking and text, relays the signature, and ends open blocks as max_tokens', () => {
    const gate = new MessagesCutGate(new OutputAllowance(20, 'claude'), 0)
    const events = [
      START,
      ev('content_block_start', {
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
      ev('content_block_delta', {
        index: 0,
        delta: { type: 'thinking_delta', thinking: 'hello '.repeat(10) },
      }),
      ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'Sig==' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
      ...Array.from({ length: 10 }, () =>
        ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'hello '.repeat(5) } }),
      ),
    ].map((e) => enc.encode(e))
    const admitted: number[] = []
    for (let i = 0; i < events.length; i++) {
      if (gate.admit(events[i]!) !== true) break
      admitted.push(i)
    }
    expect(gate.cut).toBe(true)
    // Thinking (10+): the first text delta would pass 20 and is refused, not counted.
    expect(admitted.at(-1)).toBe(5)
    expect(gate.counted).toBeLessThanOrEqual(20)
    const end = gate.ending().map((b) => JSON.parse(dec.decode(b).split('data: ')[1]!))
    expect(end.map((e) => e.type)).toEqual(['content_block_stop', 'message_delta', 'message_stop'])
    expect(end[0].index).toBe(1)
    expect(end[1].delta.stop_reason).toBe('max_tokens')
    expect(end[1].usage.output_tokens).toBe(gate.counted)
  })

  test("a block whose start is refused (a tool's name past the cap) is not closed at the cut: the client never saw it open", () => {
    const gate = new MessagesCutGate(new OutputAllowance(5, 'claude'), 0)
    const events = [
      START,
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hello' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', {
        index: 1,
        content_block: {
          type: 'tool_use',
          id: 't1',
          name: 'a_tool_name_far_longer_than_what_is_left',
          input: {},
        },
      }),
    ].map((e) => enc.encode(e))
    const admitted = events.map((e) => gate.admit(e))
    expect(admitted).toEqual([true, true, true, true, false])
    const end = gate.ending().map((b) => JSON.parse(dec.decode(b).split('data: ')[1]!))
    expect(end.map((e) => e.type)).toEqual(['message_delta', 'message_stop'])
  })

  test('assembles the message: thinking with its signature, text, tool input, the stop reason and usage', () => {
    const events = [
      START,
      ev('content_block_start', {
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
      ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'Sig==' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'text', text: '', citations: null } }),
      ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'a' } }),
      ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'b' } }),
      ev('content_block_stop', { index: 1 }),
      ev('content_block_start', {
        index: 2,
        content_block: { type: 'tool_use', id: 't1', name: 'f', input: {} },
      }),
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"x":' } }),
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '1}' } }),
      ev('content_block_stop', { index: 2 }),
      ev('message_delta', {
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 7 },
      }),
      ev('message_stop', {}),
    ].map((e) => enc.encode(e))
    const ctx = {
      modelId: 'ant/claude',
      provider: { prefix: 'ant' } as ProviderConfig,
    } as EncodeContext<MessagesRequest>
    const out = assembleMessage(events, ctx)
    expect(JSON.parse(out.body)).toEqual({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'ant/claude',
      content: [
        { type: 'thinking', thinking: 'hm', signature: 'Sig==' },
        { type: 'text', text: 'ab', citations: null },
        { type: 'tool_use', id: 't1', name: 'f', input: { x: 1 } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 9, output_tokens: 7 },
    })
    expect(out.usage?.completion_tokens).toBe(7)
    // Ended before message_stop: not a whole answer.
    expect(() => assembleMessage(events.slice(0, -1), ctx)).toThrow(/before message_stop/)
  })
})
