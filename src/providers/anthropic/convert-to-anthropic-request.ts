/**
 * @module
 * A validated OpenAI chat request → the body of `POST /v1/messages`.
 */

import type { ChatMessage, ChatRequest, ToolChoice } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { applyParamMap, type ParamRule, toStopSequences } from '../shared/apply-param-map.ts'
import { anthropicThinking, thinks } from './anthropic-thinking.ts'
import type { AnthropicRequest } from './anthropic-types.ts'
import { convertToAnthropicMessages } from './convert-to-anthropic-messages.ts'
import { prepareAnthropicTools } from './prepare-anthropic-tools.ts'

type ResponseFormat = NonNullable<ChatRequest['response_format']>

/** Asked of a request that thinks: the way out of a rule Anthropic holds thinking requests to. */
const WITHOUT_THINKING = 'or ask for no reasoning (reasoning_effort, reasoning.effort or thinking).'

/**
 * OpenAI parameters with a direct Anthropic counterpart (`response_format` json_schema →
 * `output_config.format`), the response format it cannot honour (json_object), and
 * what it refuses beside thinking (its extended-thinking docs, "Feature compatibility"): any
 * temperature but the default, top_p below 0.95, forced tool use, a prefilled answer.
 * `reasoning_effort` itself becomes `thinking` in `anthropic-thinking.ts` (its budget depends on
 * `max_tokens`).
 */
export const ANTHROPIC_PARAMS: readonly ParamRule[] = [
  // Recent Claude models refuse temperature together with top_p, and every one refuses any but
  // the default while thinking. 1 is Anthropic's own default, so leaving it out then changes
  // nothing, and keeps the gateway's default from breaking every request that sets top_p.
  {
    param: 'temperature',
    to: 'temperature',
    transform: (temperature: number, req) =>
      temperature === 1 && (req.top_p != null || thinks(req)) ? undefined : temperature,
    unsupported: {
      when: (temperature: number, req) => temperature !== 1 && thinks(req),
      message: `Anthropic models take no temperature but the default (1) while thinking: leave temperature out, ${WITHOUT_THINKING}`,
    },
  },
  {
    param: 'top_p',
    to: 'top_p',
    unsupported: {
      when: (topP: number, req) => topP < 0.95 && thinks(req),
      message: `Anthropic models take top_p only from 0.95 to 1 while thinking: leave top_p out, ${WITHOUT_THINKING}`,
    },
  },
  {
    param: 'tool_choice',
    unsupported: {
      when: (choice: ToolChoice, req) => (choice === 'required' || typeof choice === 'object') && thinks(req),
      message: `Anthropic models cannot be made to call a tool while thinking: send tool_choice "auto" or "none", ${WITHOUT_THINKING}`,
    },
  },
  {
    param: 'messages',
    unsupported: {
      when: (messages: ChatMessage[], req) => messages.at(-1)?.role === 'assistant' && thinks(req),
      message: `Anthropic models cannot continue a trailing assistant message while thinking: end with a user message, ${WITHOUT_THINKING}`,
    },
  },
  {
    param: 'top_k',
    to: 'top_k',
    unsupported: {
      when: (_topK: number, req) => thinks(req),
      message: `Anthropic models take no top_k while thinking: leave top_k out, ${WITHOUT_THINKING}`,
    },
  },
  { param: 'stop', to: 'stop_sequences', transform: toStopSequences },
  // Anthropic's abuse-detection id: OpenAI's `safety_identifier`, or the older `user` it replaces.
  { param: 'user', to: 'metadata.user_id' },
  { param: 'safety_identifier', to: 'metadata.user_id' },
  // Structured outputs: Anthropic's `output_config.format` takes the JSON Schema itself (no name,
  // no strict flag: its output always follows the schema). It has no schema-less JSON mode.
  {
    param: 'response_format',
    to: 'output_config.format',
    transform: (format: ResponseFormat) =>
      format.type === 'json_schema' ? { type: 'json_schema', schema: format.json_schema.schema } : undefined,
    unsupported: {
      when: (format: ResponseFormat) =>
        format.type === 'json_object' ||
        (format.type === 'json_schema' && format.json_schema?.schema == null),
      message:
        "Anthropic models have no schema-less JSON mode: send response_format json_schema with its schema (Anthropic's structured outputs), or ask for JSON in the prompt.",
    },
  },
]
// `n` and `logprobs` are kind limits (config/kind-limits.ts): the feature check refuses them.
// What no rule reads is refused or dropped by name before admission (`unserved-params.ts`).

/**
 * @param defaultMaxTokens used only if the gateway did not fill `max_tokens` — Anthropic requires one.
 * @example
 * convertToAnthropicRequest({ model: 'claude-x', messages, max_tokens: 256 }, { stream: true, defaultMaxTokens: 4096 })
 */
export function convertToAnthropicRequest(
  req: ChatRequest,
  opts: { stream: boolean; defaultMaxTokens: number },
): AnthropicRequest {
  const body: AnthropicRequest = {
    model: req.model,
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? opts.defaultMaxTokens,
    ...convertToAnthropicMessages(req.messages),
    ...prepareAnthropicTools(req),
  }
  applyParamMap(ANTHROPIC_PARAMS, req, body as unknown as Record<string, unknown>)
  checkBreakpoints(body)
  const thinking = anthropicThinking(req, body.max_tokens)
  if (thinking) body.thinking = thinking
  if (opts.stream) body.stream = true
  return body
}

/** Anthropic takes at most this many `cache_control` breakpoints a request (its 400 otherwise). */
const MAX_BREAKPOINTS = 4

/** More breakpoints than Anthropic takes: a 400 here, naming the count, rather than the upstream's. */
function checkBreakpoints(body: AnthropicRequest): void {
  const marked = (blocks: unknown) =>
    Array.isArray(blocks)
      ? blocks.filter((b) => (b as { cache_control?: unknown })?.cache_control != null).length
      : 0
  let n = marked(body.system) + marked(body.tools)
  for (const m of body.messages) n += marked(m.content)
  if (n > MAX_BREAKPOINTS)
    throw new GatewayError(
      400,
      'invalid_value',
      `cache_control: ${n} breakpoints (on content parts, messages and tools), but Anthropic takes at most ${MAX_BREAKPOINTS} a request. Keep the last ${MAX_BREAKPOINTS}.`,
      { param: 'cache_control' },
    )
}
