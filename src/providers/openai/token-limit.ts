/**
 * @module
 * The output-token limit under the one name the upstream knows. OpenAI's current name is
 * `max_completion_tokens` (its reasoning models, the o-series and gpt-5, refuse `max_tokens`); a
 * provider with `max_tokens_param: max_tokens` is an older compatible server that knows only the old
 * name. A client may send either name, or both agreeing (`checkTokenLimits` ran before): the upstream
 * gets the value once, under `tokenParam(provider)`. No limit given → none sent: the upstream's own
 * default applies (DESIGN §4).
 *
 * @example
 * withTokenParam({ model: 'gpt-5', messages, max_tokens: 50 }, 'max_completion_tokens')
 * // { model: 'gpt-5', messages, max_completion_tokens: 50 }
 */
import type { ProviderConfig } from '../../config/schema.ts'
import type { ChatRequest } from '../../operations/chat.ts'

export type TokenParam = 'max_completion_tokens' | 'max_tokens'

export function tokenParam(provider: ProviderConfig): TokenParam {
  return provider.max_tokens_param ?? 'max_completion_tokens'
}

/** The other name: the one the upstream must not get. */
export function otherTokenParam(param: TokenParam): TokenParam {
  return param === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens'
}

/** A copy of `req` with its limit (if any) under `param` only. */
export function withTokenParam(req: ChatRequest, param: TokenParam): ChatRequest {
  const other = otherTokenParam(param)
  if (req[other] === undefined) return req
  const limit = req[param] ?? req[other]
  const out: Record<string, unknown> = { ...req, [param]: limit }
  delete out[other]
  return out as ChatRequest
}
