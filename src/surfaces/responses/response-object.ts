/**
 * @module
 * The Responses `Response` object the gateway builds itself (translated routes), with every field
 * Open Responses' `ResponseResource` requires (openresponses/openresponses, its compliance suite's
 * schema) and as the live API sends them: `usage` null until it is known (`response.created`,
 * `.in_progress`, `.failed`), `user` null when none was sent. OpenAI's published spec types both as
 * non-null and optional; the live API and Open Responses send null, which clients read
 * (test/fixtures/reference/README.md). The request's own settings are echoed; a setting a
 * translated route does not carry reports what was used (`presence_penalty` 0).
 *
 * @example
 * const res = responseShell({ view, modelId: 'openai/gpt-4o-mini' }, 'resp_abc', 1_700_000_000)
 * finishResponse(res, output, usage, 'stop', now, completion.service_tier)
 */
import type { FinishReason, Usage } from '../../operations/chat.ts'
import type { ResponsesTool } from './request-schema.ts'
import type { ResponsesView } from './view.ts'

/** What a response object is built from: the request as decoded, and the client's model id. */
export interface ResponseContext {
  view: ResponsesView
  modelId: string
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed'

/** An output item as the Responses API reports it (message, function_call or reasoning). */
export type OutputItem = Record<string, unknown> & { id: string; type: string }

export interface ResponsesUsage {
  input_tokens: number
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number }
  output_tokens: number
  output_tokens_details: { reasoning_tokens: number }
  total_tokens: number
}

export interface ResponseObject {
  id: string
  object: 'response'
  created_at: number
  status: ResponseStatus
  completed_at: number | null
  error: { code: string; message: string } | null
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null
  model: string
  output: OutputItem[]
  usage: ResponsesUsage | null
  [field: string]: unknown
}

/** The response as announced by `response.created`: no output, no usage yet. */
export function responseShell(ctx: ResponseContext, id: string, createdAt: number): ResponseObject {
  const { input, served, temperature } = ctx.view
  const text = (v: unknown) => (typeof v === 'string' ? v : null)
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    background: false,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: input.instructions ?? null,
    max_output_tokens: input.max_output_tokens ?? null,
    metadata: input.metadata ?? {},
    model: ctx.modelId,
    output: [],
    parallel_tool_calls: input.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: input.reasoning?.effort ?? null, summary: input.reasoning?.summary ?? null },
    // The tier asked of the upstream, until it says which served (`finishResponse`).
    service_tier: ctx.view.tier ?? 'default',
    store: false,
    temperature,
    text: { format: input.text?.format ?? { type: 'text' } },
    tool_choice: input.tool_choice ?? 'auto',
    tools: served.map(echoTool),
    top_p: input.top_p ?? 1,
    truncation: 'disabled',
    // Chat parameters the Responses wire has no field for (Open Responses has): none is carried.
    presence_penalty: 0,
    frequency_penalty: 0,
    top_logprobs: input.top_logprobs ?? 0,
    // Calls to built-in tools, which no translated route runs (unknown-fields.ts): echoed.
    max_tool_calls: typeof input.max_tool_calls === 'number' ? input.max_tool_calls : null,
    safety_identifier: input.safety_identifier ?? null,
    prompt_cache_key: text(input.prompt_cache_key),
    user: input.user ?? null,
    usage: null,
  }
}

/**
 * Sets the final status, output, usage and the tier that served it (in place; returns `res`):
 * `served`, the upstream's `service_tier`, when it named one (OpenAI does); else `default`, as
 * before — whatever was asked, an upstream that names none is not known to have honoured it.
 */
export function finishResponse(
  res: ResponseObject,
  output: OutputItem[],
  usage: Usage | null | undefined,
  finish: FinishReason | null,
  now: number,
  served: unknown,
): ResponseObject {
  res.output = output
  res.service_tier = servedTier(served) ?? 'default'
  const incomplete = incompleteReason(finish)
  res.status = incomplete ? 'incomplete' : 'completed'
  res.incomplete_details = incomplete ? { reason: incomplete } : null
  res.completed_at = incomplete ? null : now
  res.usage = responsesUsage(usage)
  return res
}

/** An upstream's `service_tier` (chat completion or chunk), if it is a tier's name. */
export const servedTier = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined

/** The status of the answer's last item: `incomplete` when the answer stopped short (as the response's). */
export const lastItemStatus = (finish: FinishReason | null): 'completed' | 'incomplete' =>
  incompleteReason(finish) ? 'incomplete' : 'completed'

function incompleteReason(finish: FinishReason | null): 'max_output_tokens' | 'content_filter' | null {
  if (finish === 'length') return 'max_output_tokens'
  if (finish === 'content_filter') return 'content_filter'
  return null
}

/**
 * Chat usage in Responses terms. Reasoning tokens stay inside `output_tokens` (as OpenAI counts
 * them) and are also reported on their own.
 */
export function responsesUsage(usage: Usage | null | undefined): ResponsesUsage {
  const input = usage?.prompt_tokens ?? 0
  const output = usage?.completion_tokens ?? 0
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: usage?.prompt_tokens_details?.cache_write_tokens ?? 0,
    },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage?.total_tokens ?? input + output,
  }
}

/** Cache writes (billed at `cache_write`) only where there are some, as the adapters report them. */
const promptDetails = (cached: number, written: number): Record<string, number> =>
  written ? { cached_tokens: cached, cache_write_tokens: written } : { cached_tokens: cached }

/** Responses usage (e.g. from `response.completed`) in the chat terms usage records keep. */
export function chatUsage(usage: Partial<ResponsesUsage> | null | undefined): Usage | null {
  if (!usage || typeof usage.input_tokens !== 'number') return null
  const prompt = usage.input_tokens
  const completion = usage.output_tokens ?? 0
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage.total_tokens ?? prompt + completion,
    prompt_tokens_details: promptDetails(
      usage.input_tokens_details?.cached_tokens ?? 0,
      usage.input_tokens_details?.cache_write_tokens ?? 0,
    ),
    completion_tokens_details: { reasoning_tokens: usage.output_tokens_details?.reasoning_tokens ?? 0 },
  }
}

/** The schemas' `FunctionTool` requires `description`, `parameters` and `strict` (null allowed). */
function echoTool(tool: ResponsesTool): ResponsesTool {
  if (tool.type !== 'function') return tool
  return {
    ...tool,
    description: tool.description ?? null,
    parameters: tool.parameters ?? null,
    strict: tool.strict ?? null,
  }
}

/** Ids in OpenAI's style (`resp_…`, `msg_…`, `fc_…`, `rs_…`): a prefix and 32 hex digits. */
export function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`
}
