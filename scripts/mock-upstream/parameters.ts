/**
 * @module
 * The parameter names and values the mock refuses, as the real servers do, so a gateway that sends
 * the wrong name fails here too.
 *
 * - OpenAI's reasoning models (model names starting `o1`, `o3`, `o4`, `gpt-5`) refuse `max_tokens`
 *   and any temperature but their default 1, with OpenAI's exact error bodies.
 * - A model name containing `legacy` is an older compatible server (e.g. an Azure API version from
 *   before `max_completion_tokens`): it refuses that name with Azure's "Unrecognized request
 *   argument" body.
 */
import { errorBody } from './wire.ts'

const REASONING = /^(o1|o3|o4|gpt-5)/

/** The 400 body for a refused parameter, or null when the request is acceptable. */
export function refusedParameter(model: string, body: Record<string, unknown>): string | null {
  if (REASONING.test(model)) {
    if ('max_tokens' in body) {
      return errorBody(
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        'invalid_request_error',
        'unsupported_parameter',
        'max_tokens',
      )
    }
    if (body.temperature != null && body.temperature !== 1) {
      return errorBody(
        `Unsupported value: 'temperature' does not support ${body.temperature} with this model. Only the default (1) value is supported.`,
        'invalid_request_error',
        'unsupported_value',
        'temperature',
      )
    }
  }
  if (model.includes('legacy') && 'max_completion_tokens' in body) {
    return errorBody('Unrecognized request argument supplied: max_completion_tokens', 'invalid_request_error')
  }
  return null
}
