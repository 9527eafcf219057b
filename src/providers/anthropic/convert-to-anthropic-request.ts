/**
 * @module
 * A validated OpenAI chat request → the body of `POST /v1/messages`.
 */
import { applyParamMap, type ParamRule, toStopSequences } from '../shared/apply-param-map.ts'
import type { ChatRequest } from '../types.ts'
import type { AnthropicRequest } from './anthropic-types.ts'
import { convertToAnthropicMessages } from './convert-to-anthropic-messages.ts'
import { prepareAnthropicTools } from './prepare-anthropic-tools.ts'

/** OpenAI parameters with a direct Anthropic counterpart, and response formats it cannot honour. */
export const ANTHROPIC_PARAMS: readonly ParamRule[] = [
  // Recent Claude models refuse temperature together with top_p. 1 is Anthropic's own default,
  // so leaving it out beside top_p changes nothing, and keeps the gateway's default from
  // breaking every request that sets top_p.
  {
    param: 'temperature',
    to: 'temperature',
    transform: (temperature: number, req) =>
      temperature === 1 && req.top_p != null ? undefined : temperature,
  },
  { param: 'top_p', to: 'top_p' },
  { param: 'stop', to: 'stop_sequences', transform: toStopSequences },
  { param: 'user', to: 'metadata.user_id' },
  {
    param: 'response_format',
    unsupported: {
      when: (format: { type: string }) => format.type !== 'text',
      message:
        'Anthropic models have no JSON mode: remove response_format, or ask for JSON in the prompt, or use a model whose features include json_mode.',
    },
  },
]
// `n` and `logprobs` are kind limits (config/kind-limits.ts): the feature check refuses them.

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
  if (opts.stream) body.stream = true
  return body
}
