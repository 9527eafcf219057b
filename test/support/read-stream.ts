/**
 * @module
 * A client's reading of an SSE body on each surface's wire (chat, Messages, Responses): the
 * answer's text, the tool calls it began (name and the arguments that came), whether it ended as a
 * complete answer does, the error event if any, the model it names. Every `data:` payload must
 * parse, as an SDK would require.
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
  /** The answer's usage as the client reads it (chat: the final usage chunk). */
  let usage: { input: number; output: number } | null = null
  const calls: Array<{ name: string; arguments: string }> = []
  const args = (delta: unknown) => {
    const call = calls[calls.length - 1]
    if (call && typeof delta === 'string') call.arguments += delta
  }
  for (const d of datas) {
    if (d === '[DONE]') {
      complete = wire === 'chat'
      continue
    }
    const e = JSON.parse(d) // every event the client gets must parse
    if (e.error && wire === 'chat') error = e.error
    if (wire === 'chat') {
      text += e.choices?.[0]?.delta?.content ?? ''
      for (const call of e.choices?.[0]?.delta?.tool_calls ?? []) {
        if (call.id) calls.push({ name: call.function?.name ?? '', arguments: '' })
        args(call.function?.arguments)
      }
      model ??= e.model ?? null
      if (e.usage) usage = { input: e.usage.prompt_tokens, output: e.usage.completion_tokens }
    } else if (wire === 'messages') {
      if (e.type === 'message_start') {
        model = e.message.model
        usage = { input: e.message.usage?.input_tokens ?? 0, output: e.message.usage?.output_tokens ?? 0 }
      }
      // As the Anthropic SDK reads it: message_delta's counts replace message_start's.
      if (e.type === 'message_delta' && e.usage && usage)
        usage = { input: e.usage.input_tokens ?? usage.input, output: e.usage.output_tokens ?? usage.output }
      if (e.type === 'content_block_delta') text += e.delta.text ?? ''
      if (e.type === 'content_block_start' && e.content_block.type === 'tool_use')
        calls.push({ name: e.content_block.name, arguments: '' })
      if (e.type === 'content_block_delta') args(e.delta.partial_json)
      if (e.type === 'message_stop') complete = true
      if (e.type === 'error') error = e.error
    } else {
      if (e.type === 'response.created') model = e.response.model
      if (e.type === 'response.output_text.delta') text += e.delta
      if (e.type === 'response.output_item.added' && e.item.type === 'function_call')
        calls.push({ name: e.item.name, arguments: '' })
      if (e.type === 'response.function_call_arguments.delta') args(e.delta)
      if (e.type === 'response.completed') {
        complete = true
        const u = e.response.usage
        if (u) usage = { input: u.input_tokens, output: u.output_tokens }
      }
      if (e.type === 'error' || e.type === 'response.failed') error ??= e
    }
  }
  return { text, calls, complete, error, model, usage }
}
