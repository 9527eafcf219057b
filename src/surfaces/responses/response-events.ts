/**
 * @module
 * A Responses response object as the event stream it stands for: for a Responses-compatible
 * server (`wire: responses`) that was asked for a stream and answered one whole response (it
 * ignored `stream`). The pass-through's relay, its cut under a limit and its assembly then read
 * it as any stream (pipeline/call.ts, `Forwarding.events`), numbered by `sequence_number`:
 * `response.created` (the response `in_progress`, no output, no usage); each output item
 * `output_item.added` (without its text), its text in small pieces (`TextPieces`: so a cut at the
 * output allowance falls inside it, DESIGN §11; only as far as it may fall) — a message's `output_text` and `refusal` parts
 * (`content_part.added`, `*.delta`s, `*.done`, `content_part.done`), a reasoning item's summary
 * (`reasoning_summary_part.added`, `reasoning_summary_text.delta`s, `.done`, `part.done`), a
 * function call's arguments (`function_call_arguments.delta`s, `.done`) — and `output_item.done`
 * with the item as it came; an item of another type is added and done whole. Then the terminal
 * event its status names (`response.completed`, `.incomplete`, `.failed`) with the response as it
 * came. An `{"error": …}` body is the failure it names.
 *
 * @example
 * forward.events = (json, ctx) => responseEvents(json, ctx.provider.prefix, ctx.cutWithin)
 */
import { invalidResponse } from '../../providers/http.ts'
import { eventStream } from '../../providers/shared/event-stream.ts'
import { TextPieces } from '../../providers/shared/text-pieces.ts'
import { upstreamFailure } from './relay.ts'

type Json = Record<string, any>

const TERMINAL: Record<string, string> = { incomplete: 'response.incomplete', failed: 'response.failed' }

/** Checked whole (a failure is an HTTP error), then made as it is read (event-stream.ts). */
export function responseEvents(json: unknown, label: string, cutWithin?: number): ReadableStream<Uint8Array> {
  const r = json as Json | null
  if (r !== null && typeof r === 'object' && r.error && r.object !== 'response')
    throw upstreamFailure(label, r.error)
  if (r === null || typeof r !== 'object' || r.object !== 'response' || !Array.isArray(r.output))
    throw invalidResponse(label, 'the body is not a response object')
  if ((r.output as unknown[]).some((item) => item === null || typeof item !== 'object'))
    throw invalidResponse(label, "a response's output item is not an object")
  return eventStream(events(r, new TextPieces(cutWithin)))
}

function* events(r: Json, pieces: TextPieces): Generator<string> {
  let seq = 0
  const event = (type: string, data: Json) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: seq++ })}\n\n`
  yield event('response.created', { response: { ...r, status: 'in_progress', output: [], usage: null } })
  const output = r.output as Json[]
  for (let output_index = 0; output_index < output.length; output_index++) {
    const item = output[output_index]!
    const at = { item_id: item.id, output_index }
    if (item.type === 'message' && Array.isArray(item.content)) {
      yield event('response.output_item.added', {
        output_index,
        item: { ...item, status: 'in_progress', content: [] },
      })
      const content = item.content as Json[]
      for (let content_index = 0; content_index < content.length; content_index++) {
        const part = content[content_index]
        const field = part?.type === 'refusal' ? 'refusal' : 'text'
        const text = part?.[field]
        const name = part?.type === 'refusal' ? 'response.refusal' : 'response.output_text'
        yield event('response.content_part.added', { ...at, content_index, part: { ...part, [field]: '' } })
        if (typeof text === 'string') {
          for (const delta of pieces.of(text)) yield event(`${name}.delta`, { ...at, content_index, delta })
          yield event(`${name}.done`, { ...at, content_index, [field]: text })
        }
        yield event('response.content_part.done', { ...at, content_index, part })
      }
    } else if (item.type === 'reasoning' && Array.isArray(item.summary)) {
      yield event('response.output_item.added', { output_index, item: { ...item, summary: [] } })
      const summary = item.summary as Json[]
      for (let summary_index = 0; summary_index < summary.length; summary_index++) {
        const part = summary[summary_index]
        yield event('response.reasoning_summary_part.added', {
          ...at,
          summary_index,
          part: { ...part, text: '' },
        })
        if (typeof part?.text === 'string') {
          for (const delta of pieces.of(part.text))
            yield event('response.reasoning_summary_text.delta', { ...at, summary_index, delta })
          yield event('response.reasoning_summary_text.done', { ...at, summary_index, text: part.text })
        }
        yield event('response.reasoning_summary_part.done', { ...at, summary_index, part })
      }
    } else if (item.type === 'function_call' && typeof item.arguments === 'string') {
      yield event('response.output_item.added', {
        output_index,
        item: { ...item, status: 'in_progress', arguments: '' },
      })
      for (const delta of pieces.of(item.arguments))
        yield event('response.function_call_arguments.delta', { ...at, delta })
      yield event('response.function_call_arguments.done', { ...at, arguments: item.arguments })
    } else yield event('response.output_item.added', { output_index, item })
    yield event('response.output_item.done', { output_index, item })
  }
  yield event(TERMINAL[r.status] ?? 'response.completed', { response: r })
}
