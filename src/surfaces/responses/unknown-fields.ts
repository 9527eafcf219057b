/**
 * @module
 * The top-level fields of a Responses request that are none of `CreateResponse`'s (OpenAI's
 * published request, shared/reference) nor a Chat Completions parameter sent here by mistake
 * (`CHAT_ONLY`, refused by name on a translated route). The chat form has no place for them: a
 * translated route leaves them out and names them in `x-switchyard-dropped-params`, as the chat
 * surface names the keys it does not know; a `wire: responses` upstream gets them as sent.
 *
 * @example
 * unknownFields({ model, input: 'Hi', top_k: 40 }) // ['top_k']
 */
import { CHAT_ONLY } from './decode.ts'
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

/**
 * The unknown top-level fields of `req`, in request order; one sent as null asks for nothing. Own
 * keys of `CHAT_ONLY` only: `constructor` or `__proto__` is a client's unknown key like any other.
 */
export function unknownFields(req: ResponsesRequestInput): string[] {
  return Object.keys(req).filter(
    (key) =>
      req[key] !== undefined &&
      req[key] !== null &&
      !CREATE_RESPONSE.has(key) &&
      !Object.hasOwn(CHAT_ONLY, key),
  )
}
