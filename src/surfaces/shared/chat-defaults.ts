/**
 * @module
 * Turns a validated client request into what an adapter receives (`ChatRequest`). Never mutates
 * its input: the result is a shallow copy.
 *
 * - `null` for a known parameter means "not set" (OpenAI accepts it); it is dropped, so adapters
 *   and upstreams never see it. Unknown keys pass as they came, `null` included.
 * - `max_tokens` / `max_completion_tokens`: each may not exceed the model's `max_output_tokens`
 *   (400 `invalid_value`). Both given must agree.
 * - The defaults of DESIGN §4 (temperature 1, the model's maximum output) are what the upstream
 *   applies by itself, so none is filled in: OpenAI's reasoning models refuse `max_tokens`, and an
 *   adapter whose wire requires a limit (Anthropic's) sends the model's maximum itself.
 * - `stream_options` is dropped unless `stream` is true (OpenAI rejects it otherwise).
 */

import type { ModelConfig } from '../../config/schema.ts'
import type { ChatRequest } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { type ChatRequestInput, KNOWN_KEYS } from './chat-request-schema.ts'

type TokenField = 'max_tokens' | 'max_completion_tokens'

/** The request for the adapter: defaults applied, `model` = the provider's own name for the model. */
export function applyDefaults(req: ChatRequestInput, model: ModelConfig, upstreamName: string): ChatRequest {
  const out: Record<string, unknown> = { ...req, model: upstreamName }
  for (const key of KNOWN_KEYS) if (out[key] === null) delete out[key]
  if (out.stream !== true) delete out.stream_options

  checkTokenLimits(out, model)
  return out as ChatRequest
}

/**
 * 400 `invalid_value` when `max_tokens` or `max_completion_tokens` exceeds the model's maximum, or
 * both are given and disagree (`null` = not given). The pass-through route runs it too.
 */
export function checkTokenLimits(
  req: { max_tokens?: number | null; max_completion_tokens?: number | null },
  model: ModelConfig,
): void {
  const maxTokens = checkTokenLimit(req, 'max_tokens', model)
  const maxCompletionTokens = checkTokenLimit(req, 'max_completion_tokens', model)
  if (maxTokens != null && maxCompletionTokens != null && maxTokens !== maxCompletionTokens) {
    throw new GatewayError(
      400,
      'invalid_value',
      `max_tokens (${maxTokens}) and max_completion_tokens (${maxCompletionTokens}) disagree. Send only max_completion_tokens.`,
      { param: 'max_tokens' },
    )
  }
}

function checkTokenLimit(
  req: { max_tokens?: number | null; max_completion_tokens?: number | null },
  field: TokenField,
  model: ModelConfig,
): number | null | undefined {
  const value = req[field]
  if (value != null && value > model.max_output_tokens) {
    throw new GatewayError(
      400,
      'invalid_value',
      `${field} is ${value}, but this model produces at most ${model.max_output_tokens} tokens. Send at most ${model.max_output_tokens}, or leave ${field} out to get that maximum.`,
      { param: field },
    )
  }
  return value
}

/**
 * Removes a `reasoning_effort: "none"` the model cannot be sent: a model without the `reasoning`
 * feature answers without reasoning already, and an OpenAI one would refuse the parameter.
 */
export function dropReasoningOff(request: ChatRequest, model: ModelConfig): void {
  if (request.reasoning_effort === 'none' && !model.features.includes('reasoning')) {
    delete request.reasoning_effort
  }
}
