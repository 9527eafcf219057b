/**
 * @module
 * A Responses response object as the event stream it stands for: for a Responses-compatible
 * server (`wire: responses`) that was asked for a stream and answered one whole response (it
 * ignored `stream`). The pass-through's relay, its cut under a limit and its assembly then read
 * it as any stream (pipeline/call.ts, `Forwarding.events`), numbered by `sequence_number`:
 * `response.created` (the response `in_progress`, no output, no usage); each output item
 * `output_item.added` (without its text), its text in small pieces (`textPieces`: so a cut at the
 * output allowance falls inside it, DESIGN §11) — a message's `output_text` and `refusal` parts
 * (`content_part.added`, `*.delta`s, `*.done`, `content_part.done`), a reasoning item's summary
 * (`reasoning_summary_part.added`, `reasoning_summary_text.delta`s, `.done`, `part.done`), a
 * function call's arguments (`function_call_arguments.delta`s, `.done`) — and `output_item.done`
 * with the item as it came; an item of another type is added and done whole. Then the terminal
 * event its status names (`response.completed`, `.incomplete`, `.failed`) with the response as it
 * came. An `{"error": …}` body is the failure it names.
 *
 * @example
 * forward.events = (json, ctx) => responseEvents(json, ctx.provider.prefix)
 */
import { invalidResponse } from '../../providers/http.ts'
import { textPieces } from '../../providers/shared/text-pieces.ts'
import { upstreamFailure } from './relay.ts'

type Json = Record<string, any>

const TERMINAL: Record<string, string> = { incomplete: 'response.incomplete', failed: 'response.failed' }

export function responseEvents(json: unknown, label: string): ReadableStream<Uint8Array> {
  const r = json as Json | null
  if (r !== null && typeof r === 'object' && r.error && r.object !== 'response')
    throw upstreamFailure(label, r.error)
  if (r === null || typeof r !== 'object' || r.object !== 'response' || !Array.isArray(r.output))
    throw invalidResponse(label, 'the body is not a response object')
  const out: string[] = []
  let seq = 0
  const event = (type: string, data: Json) =>
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: seq++ })}\n\n`)
  event('response.created', { response: { ...r, status: 'in_progress', output: [], usage: null } })
  ;(r.output as Json[]).forEach((item, output_index) => {
    if (item === null || typeof item !== 'object')
      throw invalidResponse(label, "a response's output item is not an object")
    const at = { item_id: item.id, output_index }
    if (item.type === 'message' && Array.isArray(item.content)) {
      event('response.output_item.added', {
        output_index,
        item: { ...item, status: 'in_progress', content: [] },
      })
      ;(item.content as Json[]).forEach((part, content_index) => {
        const field = part?.type === 'refusal' ? 'refusal' : 'text'
        const text = part?.[field]
        const name = part?.type === 'refusal' ? 'response.refusal' : 'response.output_text'
        event('response.content_part.added', { ...at, content_index, part: { ...part, [field]: '' } })
        if (typeof text === 'string') {
          for (const delta of textPieces(text)) event(`${name}.delta`, { ...at, content_index, delta })
          event(`${name}.done`, { ...at, content_index, [field]: text })
        }
        event('response.content_part.done', { ...at, content_index, part })
      })
    } else if (item.type === 'reasoning' && Array.isArray(item.summary)) {
      event('response.output_item.added', { output_index, item: { ...item, summary: [] } })
      ;(item.summary as Json[]).forEach((part, summary_index) => {
        event('response.reasoning_summary_part.added', { ...at, summary_index, part: { ...part, text: '' } })
        if (typeof part?.text === 'string') {
          for (const delta of textPieces(part.text))
            event('response.reasoning_summary_text.delta', { ...at, summary_index, delta })
          event('response.reasoning_summary_text.done', { ...at, summary_index, text: part.text })
        }
        event('response.reasoning_summary_part.done', { ...at, summary_index, part })
      })
    } else if (item.type === 'function_call' && typeof item.arguments === 'string') {
      event('response.output_item.added', {
        output_index,
        item: { ...item, status: 'in_progress', arguments: '' },
      })
      for (const delta of textPieces(item.arguments))
        event('response.function_call_arguments.delta', { ...at, delta })
      event('response.function_call_arguments.done', { ...at, arguments: item.arguments })
    } else event('response.output_item.added', { output_index, item })
    event('response.output_item.done', { output_index, item })
  })
  event(TERMINAL[r.status] ?? 'response.completed', { response: r })
  const bytes = new TextEncoder().encode(out.join(''))
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes)
      controller.close()
    },
  })
}
