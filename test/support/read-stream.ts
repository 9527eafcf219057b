/**
 * @module
 * A client's reading of an SSE body on each surface's wire (chat, Messages, Responses): the
 * answer's text, whether it ended as a complete answer does, the error event if any, the model it
 * names. Every `data:` payload must parse, as an SDK would require.
 */
import type { Wire } from './fault-upstream.ts'

/** A client's reading of an SSE body on `wire`: the text, whether it ended as complete, any error. */
export function readStream(wire: Wire, body: string) {
  const datas = body
    .split('\n\n')
    .map((e) => e.split('\n').find((l) => l.startsWith('data:')))
    .filter((l): l is string => l !== undefined)
    .map((l) => l.slice(5).trim())
  let text = ''
  let complete = false
  let error: any = null
  let model: string | null = null
  for (const d of datas) {
    if (d === '[DONE]') {
      complete = wire === 'chat'
      continue
    }
    const e = JSON.parse(d) // every event the client gets must parse
    if (e.error && wire === 'chat') error = e.error
    if (wire === 'chat') {
      text += e.choices?.[0]?.delta?.content ?? ''
      model ??= e.model ?? null
    } else if (wire === 'messages') {
      if (e.type === 'message_start') model = e.message.model
      if (e.type === 'content_block_delta') text += e.delta.text ?? ''
      if (e.type === 'message_stop') complete = true
      if (e.type === 'error') error = e.error
    } else {
      if (e.type === 'response.created') model = e.response.model
      if (e.type === 'response.output_text.delta') text += e.delta
      if (e.type === 'response.completed') complete = true
      if (e.type === 'error' || e.type === 'response.failed') error ??= e
    }
  }
  return { text, complete, error, model }
}
