/**
 * @module
 * What the demo model says: `Echo: <latest user text>` (or an acknowledgement of a tool result),
 * a tool call when asked for one, JSON when a JSON response format is set; cut at the answer's
 * bound (`bound.ts`, all choices together), a `stop` sequence or `max_tokens` (finish_reason
 * `length`; its tokens counted as a gateway counts the demo's stream, text.ts `withinTokens`).
 * Same request, same answer.
 */
import { demoTokens } from '../../limits/output-count.ts'
import type { ChatRequest, FinishReason, ToolCall } from '../../operations/chat.ts'
import { choiceBudget, schemaTooLarge } from './bound.ts'
import { jsonFromSchema, SchemaTooLarge } from './json-from-schema.ts'
import { lastTurn, lastUserMessage, messageText, userText, withinTokens } from './text.ts'
import { pickToolCalls } from './tools.ts'

/** JSON mode's answer: `{"echo": <the reply>}`, cut to fit like any schema's strings. */
const ECHO_SCHEMA = { type: 'object', properties: { echo: { type: 'string' } } }

export interface DemoAnswer {
  content: string | null
  toolCalls: ToolCall[]
  finishReason: FinishReason
  /** For one choice. */
  completionTokens: number
}

/** `maxOutput`: the model's maximum, the demo's own default limit (the gateway sends none). */
export function demoAnswer(req: ChatRequest, maxOutput: number): DemoAnswer {
  const n = req.n ?? 1
  const budget = choiceBudget(n)
  const toolCalls = pickToolCalls(req, budget, n)
  if (toolCalls.length > 0) {
    let chars = 0
    for (const call of toolCalls) chars += call.function.name.length + call.function.arguments.length
    return { content: null, toolCalls, finishReason: 'tool_calls', completionTokens: demoTokens(chars) }
  }
  const reply = replyText(req)
  const answer = formatted(req, reply, budget, n)
  let text = answer.text
  // Cut at the bound: the answer ran out of length, unless a stop sequence ends it first.
  let finishReason: FinishReason = answer.shortened ? 'length' : 'stop'
  const stops = req.stop == null ? [] : typeof req.stop === 'string' ? [req.stop] : req.stop
  for (const stop of stops) {
    const at = stop ? text.indexOf(stop) : -1
    if (at !== -1) {
      text = text.slice(0, at)
      finishReason = 'stop'
    }
  }
  // Held to its cap as a provider holds it, in the tokens it reports (text.ts `withinTokens`).
  const within = withinTokens(text, req.max_completion_tokens ?? req.max_tokens ?? maxOutput)
  if (within.cut) finishReason = 'length'
  return { content: within.text, toolCalls: [], finishReason, completionTokens: within.tokens }
}

function replyText(req: ChatRequest): string {
  const last = lastTurn(req.messages)
  if (last?.role === 'tool') return `Tool result received: ${messageText(last)}`
  return `Echo: ${userText(lastUserMessage(req.messages))}`
}

/** The reply as the response format asks, within `budget`; `shortened` when the reply was cut to fit. */
function formatted(req: ChatRequest, reply: string, budget: number, n: number) {
  const format = req.response_format
  const schema =
    format?.type === 'json_object'
      ? ECHO_SCHEMA
      : format?.type === 'json_schema'
        ? (format.json_schema.schema ?? ECHO_SCHEMA)
        : undefined
  if (!schema) return { text: cut(reply, budget), shortened: reply.length > budget }
  try {
    const { json, cut: shortened } = jsonFromSchema(schema, reply, budget)
    return { text: json, shortened }
  } catch (e) {
    if (e instanceof SchemaTooLarge) throw schemaTooLarge(e, "the response format's JSON schema", n)
    throw e
  }
}

/** Cuts to `max` UTF-16 units without splitting a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text
  const code = text.charCodeAt(max - 1)
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max)
}
