/**
 * @module
 * A chat completion (from any translating adapter) → the Responses object: reasoning text, if the
 * upstream gave any, as a `reasoning` item with a summary; text or a refusal as one assistant
 * `message`; each tool call as a `function_call` item (with its namespace when it came from one).
 *
 * @example
 * const res = encodeResponse(await adapter.complete(request, callCtx), { view, modelId: 'demo/echo' })
 */
import type { ChatCompletion, ToolCall } from '../../operations/chat.ts'
import {
  finishResponse,
  lastItemStatus,
  newId,
  type OutputItem,
  type ResponseContext,
  type ResponseObject,
  responseShell,
} from './response-object.ts'
import { summaryContent } from './summary-text.ts'

export function encodeResponse(completion: ChatCompletion, ctx: ResponseContext): ResponseObject {
  const res = responseShell(ctx, newId('resp'), completion.created ?? Math.floor(Date.now() / 1000))
  const choice = completion.choices[0]
  const output: OutputItem[] = []
  const message = choice?.message
  const reasoning = reasoningText(message)
  if (reasoning) output.push(reasoningItem(newId('rs'), reasoning))
  if (message?.refusal) output.push(messageItem(newId('msg'), { type: 'refusal', refusal: message.refusal }))
  else if (message?.content) output.push(messageItem(newId('msg'), outputText(message.content)))
  for (const call of message?.tool_calls ?? []) {
    output.push(functionCallItem(newId('fc'), call, ctx.view.decoded.tools.namespaces, 'completed'))
  }
  // An answer cut short (max_output_tokens, content_filter): its last item is `incomplete`.
  const last = output[output.length - 1]
  if (last && 'status' in last) last.status = lastItemStatus(choice?.finish_reason ?? null)
  if (ctx.view.decoded.compacting) output.push(compactionItem(message?.content ?? ''))
  return finishResponse(
    res,
    output,
    completion.usage,
    choice?.finish_reason ?? null,
    Math.floor(Date.now() / 1000),
    completion.service_tier,
  )
}

/** What OpenAI-compatible servers (vLLM, DeepSeek, OpenRouter) call the model's reasoning text. */
export function reasoningText(source: Record<string, unknown> | undefined): string | undefined {
  const text = source?.reasoning_content ?? source?.reasoning
  return typeof text === 'string' && text !== '' ? text : undefined
}

export const outputText = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] })

export function messageItem(
  id: string,
  part: Record<string, unknown> | null,
  status: 'in_progress' | 'completed' | 'incomplete' = 'completed',
): OutputItem {
  return { id, type: 'message', status, content: part ? [part] : [], role: 'assistant' }
}

/** Codex's compaction (`compaction_trigger` in the input): the summary, as the one `compaction` item. */
export function compactionItem(summary: string): OutputItem {
  return { id: newId('cmp'), type: 'compaction', encrypted_content: summaryContent(summary) }
}

export function reasoningItem(id: string, summary: string | null): OutputItem {
  return { id, type: 'reasoning', summary: summary === null ? [] : [{ type: 'summary_text', text: summary }] }
}

export function functionCallItem(
  id: string,
  call: ToolCall,
  namespaces: ReadonlyMap<string, string>,
  status: 'in_progress' | 'completed' | 'incomplete',
): OutputItem {
  const item: OutputItem = {
    id,
    type: 'function_call',
    status,
    arguments: call.function.arguments,
    call_id: call.id,
    name: call.function.name,
  }
  const namespace = namespaces.get(call.function.name)
  if (namespace !== undefined) item.namespace = namespace
  return item
}
