/**
 * A whole JSON answer read as the stream it stands for (completion-events.ts,
 * anthropic/message-events.ts, responses/response-events.ts, gemini/response-events.ts) costs about its own size (DESIGN §16):
 * its text is split into pieces only as far as a cut may fall (`cutWithin`, under a limit), the
 * rest in one, and its events are made as they are read. Review66: every ~16 characters became a
 * chunk of their own, limit or not, all joined at once — a 2 MB text was 42 MB of events, 30 MB
 * of text 632 MB (+2.7 GB RSS).
 */
import { describe, expect, test } from 'bun:test'
import { messageEvents } from '../../../src/providers/anthropic/message-events.ts'
import { geminiEvents } from '../../../src/providers/gemini/response-events.ts'
import { completionEvents } from '../../../src/providers/shared/completion-events.ts'
import { responseEvents } from '../../../src/surfaces/responses/response-events.ts'

const MB = 2
const words = 'lorem ipsum dolor sit amet consectetur '
const text = words.repeat(Math.ceil((MB * 2 ** 20) / words.length)).slice(0, MB * 2 ** 20)

/** Each read's bytes, and the deltas' text (the field `field` of each event's `data`). */
async function read(body: ReadableStream<Uint8Array>, deltas: (data: any) => string | undefined) {
  const reads: number[] = []
  const chunks: Uint8Array[] = []
  for await (const b of body) {
    reads.push(b.byteLength)
    chunks.push(b)
  }
  const all = Buffer.concat(chunks).toString()
  const pieces: string[] = []
  for (const e of all.split(/\r?\n\r?\n/)) {
    const line = e.split('\n').find((l) => l.startsWith('data: '))
    if (!line || line === 'data: [DONE]') continue
    const piece = deltas(JSON.parse(line.slice(6)))
    if (piece !== undefined) pieces.push(piece)
  }
  return { bytes: all.length, first: reads[0]!, pieces }
}

const chat = (cutWithin?: number) =>
  read(
    completionEvents(
      {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [
          { index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      } as any,
      cutWithin,
    ),
    (d) => d.choices?.[0]?.delta?.content,
  )

const messages = (cutWithin?: number) =>
  read(
    messageEvents(
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        model: 'm',
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1, output_tokens: 1 },
      },
      { prefix: 'anthropic', kind: 'anthropic' } as any,
      cutWithin,
    ),
    (d) => (d.type === 'content_block_delta' ? d.delta.text : undefined),
  )

const responses = (cutWithin?: number) =>
  read(
    responseEvents(
      {
        object: 'response',
        id: 'resp_1',
        status: 'completed',
        output: [
          {
            type: 'message',
            id: 'msg_1',
            role: 'assistant',
            content: [{ type: 'output_text', text, annotations: [] }],
          },
        ],
      },
      'openai',
      cutWithin,
    ),
    (d) => (d.type === 'response.output_text.delta' ? d.delta : undefined),
  )

const gemini = (cutWithin?: number) =>
  read(
    geminiEvents(
      {
        candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
      },
      { prefix: 'gemini', kind: 'gemini' } as any,
      cutWithin,
    ),
    (d) => d.candidates?.[0]?.content?.parts?.[0]?.text,
  )

// Times the wire carries the text whole besides its deltas: Responses repeats it in `.done`,
// `content_part.done`, `output_item.done` and the terminal response.
const cases = [
  ['chat', chat, 1],
  ['messages', messages, 1],
  ['responses', responses, 5],
  ['gemini', gemini, 1],
] as const

describe.each(cases)('%s: a whole answer read as a stream', (_name, events, repeats) => {
  test('without a limit, each text is one piece: its events are about its size', async () => {
    const r = await events()
    expect(r.pieces).toEqual([text])
    expect(r.bytes).toBeLessThan(repeats * text.length + 4096)
  })

  test('under a limit, pieces as far as the cut may fall, then the rest in one; made as read', async () => {
    const r = await events(1_000)
    expect(r.pieces.join('')).toBe(text)
    // One piece more than the tokens a cut falls within, then the rest.
    expect(r.pieces.length).toBe(1_002)
    for (const piece of r.pieces.slice(0, -1)) expect(piece.length).toBeLessThanOrEqual(16)
    expect(r.bytes).toBeLessThan((repeats + 1) * text.length)
    // Not every event joined at once: the first read is a batch of the pieced events.
    expect(r.first).toBeLessThan(256 * 1024)
  })
})
