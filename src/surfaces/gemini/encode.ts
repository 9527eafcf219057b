/**
 * @module
 * The canonical chat answer → Gemini's `GenerateContentResponse`: each choice a candidate at its
 * index (`role: model`; reasoning as `thought: true` parts when the request set `includeThoughts`,
 * then the text, then each tool call as a `functionCall` with its id and parsed `args`), the
 * finish reason in Google's names, usage as `usageMetadata` (thinking tokens apart in
 * `thoughtsTokenCount`, as Gemini reports them), the client's model id as `modelVersion`.
 */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../operations/chat.ts'
import type { GeminiPart, GeminiResponse, GeminiUsageMetadata } from '../../providers/gemini/gemini-types.ts'

const FINISH: Record<FinishReason, string> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  tool_calls: 'STOP',
  function_call: 'STOP',
  content_filter: 'SAFETY',
}

export function geminiFinishReason(reason: FinishReason | null | undefined): string {
  return (reason && FINISH[reason]) || 'STOP'
}

/** A tool call → a `functionCall` part; arguments that are not a JSON object become `{}`. */
export function functionCallPart(
  call: Pick<ToolCall, 'id'> & { function: { name: string; arguments: string } },
): GeminiPart {
  let args: Record<string, unknown> = {}
  try {
    const parsed = JSON.parse(call.function.arguments || '{}') as unknown
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      args = parsed as Record<string, unknown>
  } catch {}
  return { functionCall: { id: call.id, name: call.function.name, args } }
}

/**
 * @example
 * geminiUsage({ prompt_tokens: 9, completion_tokens: 30, total_tokens: 39, completion_tokens_details: { reasoning_tokens: 20 } })
 * // { promptTokenCount: 9, candidatesTokenCount: 10, thoughtsTokenCount: 20, totalTokenCount: 39 }
 */
export function geminiUsage(usage: Usage): GeminiUsageMetadata {
  const thoughts = usage.completion_tokens_details?.reasoning_tokens ?? 0
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0
  return {
    promptTokenCount: usage.prompt_tokens,
    candidatesTokenCount: Math.max(0, usage.completion_tokens - thoughts),
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    ...(cached ? { cachedContentTokenCount: cached } : {}),
    totalTokenCount: usage.total_tokens || usage.prompt_tokens + usage.completion_tokens,
  }
}

/** Gemini's `responseId` from the canonical id (`chatcmpl-…`). */
export function responseIdOf(id: string): string {
  return id.replace(/^chatcmpl-/, '')
}

export function encodeCompletion(c: ChatCompletion, modelId: string, thoughts: boolean): GeminiResponse {
  const candidates = c.choices.map((choice) => {
    const parts: GeminiPart[] = []
    const reasoning = choice.message.reasoning_content
    if (thoughts && typeof reasoning === 'string' && reasoning !== '')
      parts.push({ text: reasoning, thought: true })
    if (choice.message.content) parts.push({ text: choice.message.content })
    for (const call of choice.message.tool_calls ?? []) parts.push(functionCallPart(call))
    if (parts.length === 0) parts.push({ text: '' })
    return {
      content: { role: 'model', parts },
      finishReason: geminiFinishReason(choice.finish_reason),
      index: choice.index,
    }
  })
  const out: GeminiResponse = { candidates }
  if (c.usage) out.usageMetadata = geminiUsage(c.usage)
  out.modelVersion = modelId
  out.responseId = responseIdOf(c.id)
  return out
}
