/**
 * @module
 * What the demo model says: `Echo: <latest user text>` (or an acknowledgement of a tool result),
 * a tool call when asked for one, JSON when a JSON response format is set; cut at a `stop`
 * sequence or at `max_tokens` (finish_reason `length`). Same request, same answer.
 */
import type { ChatRequest, FinishReason, ToolCall } from '../types.ts'
import { valueFromSchema } from './json-from-schema.ts'
import { estimateTokens, lastTurn, lastUserMessage, messageText, userText } from './text.ts'
import { pickToolCalls } from './tools.ts'

/**
 * The longest answer a demo model gives, in characters (finish_reason `length` past it). It echoes
 * the prompt, so without a cap a 400 KB prompt made a 400 KB answer per choice — 30 MB of chunk
 * objects per stream, 2.8 GB for 100 of them.
 */
export const MAX_ANSWER_CHARS = 32_768

export interface DemoAnswer {
  content: string | null
  toolCalls: ToolCall[]
  finishReason: FinishReason
  /** For one choice. */
  completionTokens: number
}

/** `maxOutput`: the model's maximum, the demo's own default limit (the gateway sends none). */
export function demoAnswer(req: ChatRequest, maxOutput: number): DemoAnswer {
  const toolCalls = pickToolCalls(req)
  if (toolCalls.length > 0) {
    let chars = 0
    for (const call of toolCalls) chars += call.function.name.length + call.function.arguments.length
    return { content: null, toolCalls, finishReason: 'tool_calls', completionTokens: estimateTokens(chars) }
  }
  const reply = replyText(req)
  let text = formatted(req, cut(reply, MAX_ANSWER_CHARS))
  // Cut at the cap: the answer ran out of length, unless a stop sequence ends it first.
  let finishReason: FinishReason = reply.length > MAX_ANSWER_CHARS ? 'length' : 'stop'
  const stops = req.stop == null ? [] : typeof req.stop === 'string' ? [req.stop] : req.stop
  for (const stop of stops) {
    const at = stop ? text.indexOf(stop) : -1
    if (at !== -1) {
      text = text.slice(0, at)
      finishReason = 'stop'
    }
  }
  const max = req.max_completion_tokens ?? req.max_tokens ?? maxOutput
  const limit = Math.min(max * 4, MAX_ANSWER_CHARS)
  if (text.length > limit) {
    text = cut(text, limit)
    finishReason = 'length'
  }
  return { content: text, toolCalls: [], finishReason, completionTokens: estimateTokens(text.length) }
}

function replyText(req: ChatRequest): string {
  const last = lastTurn(req.messages)
  if (last?.role === 'tool') return `Tool result received: ${messageText(last)}`
  return `Echo: ${userText(lastUserMessage(req.messages))}`
}

function formatted(req: ChatRequest, text: string): string {
  const format = req.response_format
  if (format?.type === 'json_object') return JSON.stringify({ echo: text })
  if (format?.type === 'json_schema') {
    const schema = format.json_schema.schema
    return JSON.stringify(schema ? valueFromSchema(schema, text) : { echo: text })
  }
  return text
}

/** Cuts to `max` UTF-16 units without splitting a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text
  const code = text.charCodeAt(max - 1)
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max)
}
