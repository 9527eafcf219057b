/**
 * @module
 * The top-level fields of a Responses request that a translated route leaves out and names in
 * `x-switchyard-dropped-params`, as the chat surface names what it leaves out: those that are none
 * of `CreateResponse`'s (OpenAI's published request, shared/reference) nor a Chat Completions
 * parameter sent here by mistake (`CHAT_ONLY`, refused by name), and the bookkeeping ones the chat
 * form has no place for (`BOOKKEEPING`), but those an `openai` upstream's chat API takes as they
 * are (`openaiChatFields`), carried to it. A `wire: responses` upstream gets them all as sent.
 *
 * @example
 * droppedFields({ model, input: 'Hi', top_k: 40, prompt_cache_key: 'c1' }) // ['top_k', 'prompt_cache_key']
 * const carried = openaiChatFields(req) // { prompt_cache_key: 'c1' }: sent to an openai chat upstream
 * droppedFields(req, carried) // ['top_k']
 */
import type { ResponsesRequestInput } from './request-schema.ts'

/** Every property of `CreateResponse` (openai-responses-schemas.json, API version 2.3.0). */
const CREATE_RESPONSE = new Set([
  'background',
  'context_management',
  'conversation',
  'include',
  'input',
  'instructions',
  'max_output_tokens',
  'max_tool_calls',
  'metadata',
  'model',
  'moderation',
  'parallel_tool_calls',
  'previous_response_id',
  'prompt',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'reasoning',
  'safety_identifier',
  'service_tier',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'truncation',
  'user',
])

const isEmptyObject = (v: unknown) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0
const isEmptyArray = (v: unknown) => Array.isArray(v) && v.length === 0

/**
 * `CreateResponse` fields that change nothing the model writes and that the chat form has no place
 * for, each with OpenAI's own default (a value that asks for nothing, so is not named): OpenAI's
 * bookkeeping — its dashboard (`metadata`, still echoed on the response), its tiers (`service_tier`:
 * the response says the tier that served it, `default`), its prompt cache — what only its
 * conversation handling does (`truncation`, `context_management`: a conversation over the context
 * window gets the upstream's context-length error instead), calls to built-in tools, which no
 * translated route runs (`max_tool_calls`), and output only OpenAI adds (`include`: encrypted
 * reasoning, hosted tools' sources and results, input image URLs; log probabilities are refused
 * before, `decode.ts`).
 *
 * Not here, as a translated route does what they ask: `store` (stateless: nothing is kept, and
 * `store: true` is accepted as false), `stream_options` (its one option, `include_obfuscation`,
 * adds padding a translated stream never has: `false` is served, `true` is the default),
 * `background: false`, `top_logprobs: 0`. `user` and `safety_identifier` are chat parameters too,
 * named where the provider kind drops them (`unservedParams`).
 */
const BOOKKEEPING: Readonly<Record<string, (value: unknown) => boolean>> = {
  metadata: isEmptyObject,
  service_tier: (v) => v === 'auto',
  prompt_cache_key: () => false,
  prompt_cache_retention: (v) => v === 'in_memory',
  prompt_cache_options: (v) =>
    typeof v === 'object' &&
    v !== null &&
    Object.entries(v).every(([k, x]) => (k === 'ttl' && x === '30m') || (k === 'mode' && x === 'implicit')),
  truncation: (v) => v === 'disabled',
  context_management: isEmptyArray,
  max_tool_calls: () => false,
  include: isEmptyArray,
}

/**
 * The bookkeeping fields OpenAI's chat API takes under the same name and meaning (its
 * `CreateChatCompletionRequest` and `CreateResponse` share `CreateModelResponseProperties`), with
 * the values it takes: the prompt-cache hints (Codex CLI sends `prompt_cache_key` every turn; left
 * out, its turns lose their cache hits at OpenAI) and `service_tier` but `ultrafast`, a tier only
 * Responses has (`ServiceTierResponses`). Not `metadata`: chat takes it only beside `store: true`
 * ("The 'metadata' parameter is only allowed when 'store' is enabled"), which a stateless gateway
 * never sends.
 */
const OPENAI_CHAT_TAKES: Readonly<Record<string, (value: unknown) => boolean>> = {
  prompt_cache_key: () => true,
  prompt_cache_retention: () => true,
  prompt_cache_options: () => true,
  service_tier: (v) => v !== 'ultrafast',
}

/**
 * The fields of `req` an `openai`-kind upstream's chat request carries as they came, under the
 * same names (`OPENAI_CHAT_TAKES`): only those the client sent, null being none. Another kind
 * gets none of them, and `droppedFields` names them.
 */
export function openaiChatFields(req: ResponsesRequestInput): Record<string, unknown> {
  const carried: Record<string, unknown> = {}
  for (const [key, takes] of Object.entries(OPENAI_CHAT_TAKES)) {
    const value = req[key]
    if (value !== undefined && value !== null && takes(value)) carried[key] = value
  }
  return carried
}

/**
 * The top-level fields of `req` a translated route leaves out and names, in request order: the
 * unknown ones and the bookkeeping ones not at OpenAI's default, but those `carried` to the
 * upstream (`openaiChatFields`). One sent as null asks for nothing. Own keys of the tables only:
 * `constructor` or `__proto__` is a client's unknown key like any other.
 */
export function droppedFields(
  req: ResponsesRequestInput,
  carried: Readonly<Record<string, unknown>> = {},
): string[] {
  return Object.keys(req).filter((key) => {
    const value = req[key]
    if (value === undefined || value === null || Object.hasOwn(carried, key)) return false
    const isDefault = Object.hasOwn(BOOKKEEPING, key) ? BOOKKEEPING[key] : undefined
    if (isDefault) return !isDefault(value)
    return !CREATE_RESPONSE.has(key)
  })
}
