/**
 * @module
 * What `POST /v1/responses/compact` (Codex's remote compaction) asks and answers, apart from the
 * route: the summary request the target model is sent — the client's conversation as a Responses
 * request with one user message more asking for a handoff summary — and the `CompactResource`
 * made of its answer: the conversation's latest user messages (as Codex keeps them when it
 * compacts locally), then the summary as a user message. Its shapes are Open Responses'
 * (`CompactResponseMethodPublicBody`, `CompactResource`).
 *
 * Codex also compacts through `POST /v1/responses` itself: its input ends with a
 * `compaction_trigger` item and it keeps the one `compaction` item of the answer, sending it back
 * as input on later turns. On a translated route the trigger is the summary prompt and the
 * `compaction` item carries the summary in `encrypted_content` — not encrypted: marked as the
 * gateway's (`summaryContent`), so that a later turn reads it back as the summary (`readSummary`).
 *
 * @example
 * const summary = summaryRequest(body)          // the Responses request the model is sent
 * compactResource(body, 'The task is …', usage) // { object: 'response.compaction', output, usage }
 */
import type { Usage } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { newId, type OutputItem, type ResponsesUsage, responsesUsage } from './response-object.ts'
import { SUMMARY_HEADER, SUMMARY_PROMPT } from './summary-text.ts'

/**
 * Text of the user messages kept beside the summary, newest first, in characters (about 20,000
 * tokens): the summary covers the older ones.
 */
export const KEPT_USER_CHARS = 80_000

/**
 * The Responses request that asks the target model for the summary: the client's fields as they
 * came (`temperature`, `top_p`, `instructions`, `reasoning`, ...: what shapes the answer shapes the
 * summary too, on every route), its `input` (a string is a user message) then the summary prompt,
 * not stored; its tools offered but not to be called (`tool_choice: none`: the history's calls
 * keep their definitions).
 */
export function summaryRequest(body: Record<string, unknown>, stream = false): Record<string, unknown> {
  const input = body.input ?? []
  const turns = typeof input === 'string' ? [{ role: 'user', content: input }] : input
  if (!Array.isArray(turns)) {
    throw new GatewayError(400, 'invalid_type', 'input must be a string or an array of input items.', {
      param: 'input',
    })
  }
  const request: Record<string, unknown> = {
    ...body,
    input: [...turns, { role: 'user', content: SUMMARY_PROMPT }],
    stream,
    store: false,
  }
  return noToolCalls(request)
}

/** The summary's tools are offered, not to be called: the history's calls keep their definitions. */
export function noToolCalls<T extends { tools?: unknown; tool_choice?: unknown }>(request: T): T {
  if (Array.isArray(request.tools) && request.tools.length > 0) request.tool_choice = 'none'
  return request
}

/**
 * What `validateResponsesRequest` checks, as `/v1/responses` checks it (types, stored-state
 * fields, Chat Completions fields and unknown ones on a translated route): the summary request
 * with the client's other fields beside it. A `stream` or `store` of the wrong type and the
 * client's `tool_choice` stay the client's, to be refused by name (the caller then makes the
 * summary's `tool_choice` none: `noToolCalls`).
 */
export function checkedSummary(body: Record<string, unknown>): Record<string, unknown> {
  const request = summaryRequest(body)
  for (const key of ['stream', 'store'])
    if (body[key] != null && typeof body[key] !== 'boolean') request[key] = body[key]
  if (body.tool_choice !== undefined) request.tool_choice = body.tool_choice
  else delete request.tool_choice
  return request
}

/**
 * What a compaction refuses beyond `/v1/responses`' check, with a 400 naming the field: a body
 * with nothing to compact (OpenAI's takes `previous_response_id` instead, refused here),
 * `stream: true` (a compaction is answered whole) and `store: true` (the compact endpoint keeps nothing; `/v1/responses` treats it as false).
 */
export function checkCompaction(body: Record<string, unknown>): void {
  const input = body.input
  if (input == null || input === '' || (Array.isArray(input) && input.length === 0)) {
    throw new GatewayError(
      400,
      'missing_required_parameter',
      'input is the conversation to compact, and this body has none: send it as a string or an array of input items.',
      { param: 'input' },
    )
  }
  if (body.stream === true) {
    throw new GatewayError(
      400,
      'unsupported_value',
      "stream: true asks for a streamed answer, and a compaction is answered whole (OpenAI's compact endpoint has no stream): leave stream out.",
      { param: 'stream' },
    )
  }
  if (body.store === true) {
    throw new GatewayError(
      400,
      'unsupported_value',
      'store: true asks for the compaction to be stored on the server, and Switchyard is stateless (it stores no responses): leave store out.',
      { param: 'store' },
    )
  }
}

export interface CompactResource {
  id: string
  object: 'response.compaction'
  created_at: number
  output: OutputItem[]
  usage: ResponsesUsage
}

/** The compacted conversation: the latest user messages of `body.input`, then the summary. */
export function compactResource(
  body: Record<string, unknown>,
  summary: string,
  usage: Usage | null | undefined,
): CompactResource {
  const output = keptUserMessages(body.input)
  output.push(userMessage([{ type: 'input_text', text: `${SUMMARY_HEADER}${summary}` }]))
  return {
    id: newId('resp'),
    object: 'response.compaction',
    created_at: Math.floor(Date.now() / 1000),
    output,
    usage: responsesUsage(usage),
  }
}

/** The text of an answer's assistant message(s) (a Responses `output`), or '' when it has none. */
export function outputTextOf(output: unknown): string {
  if (!Array.isArray(output)) return ''
  let text = ''
  for (const item of output as { type?: unknown; content?: unknown }[]) {
    if (item?.type !== 'message' || !Array.isArray(item.content)) continue
    for (const part of item.content as { type?: unknown; text?: unknown }[])
      if (part?.type === 'output_text' && typeof part.text === 'string') text += part.text
  }
  return text
}

/** The user messages to keep, oldest first, within `KEPT_USER_CHARS` counted from the newest. */
function keptUserMessages(input: unknown): OutputItem[] {
  if (typeof input === 'string') return [userMessage([{ type: 'input_text', text: input }])]
  if (!Array.isArray(input)) return []
  const kept: OutputItem[] = []
  let left = KEPT_USER_CHARS
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as { type?: unknown; role?: unknown; content?: unknown }
    if (item?.role !== 'user' || (item.type !== undefined && item.type !== 'message')) continue
    const parts = contentParts(item.content)
    const size = parts.reduce((n, p) => n + (typeof p.text === 'string' ? p.text.length : 0), 0)
    if (parts.length === 0) continue
    if (size > left) break
    left -= size
    kept.push(userMessage(parts))
  }
  return kept.reverse()
}

/** A message's content as output content parts (an image gets the `detail` the schema requires). */
function contentParts(content: unknown): Record<string, unknown>[] {
  if (typeof content === 'string') return [{ type: 'input_text', text: content }]
  if (!Array.isArray(content)) return []
  const parts: Record<string, unknown>[] = []
  for (const p of content as Record<string, unknown>[]) {
    if (p?.type === 'input_text' && typeof p.text === 'string')
      parts.push({ type: 'input_text', text: p.text })
    else if (p?.type === 'input_image')
      parts.push({ ...p, image_url: p.image_url ?? null, detail: p.detail ?? 'auto' })
    else if (p?.type === 'input_file') parts.push({ ...p })
  }
  return parts
}

function userMessage(content: Record<string, unknown>[]): OutputItem {
  return { id: newId('msg'), type: 'message', status: 'completed', role: 'user', content }
}
