/**
 * @module
 * Where and how to call an OpenAI-compatible upstream: endpoint URL and request headers, and the
 * error some servers answer with a 200.
 */
import type { ProviderConfig } from '../../config/schema.ts'
import type { GatewayError } from '../../util/errors.ts'
import { errorCodeOf } from '../failure-facts.ts'
import { describeUpstreamError, inBandError } from '../http.ts'

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1'

/** `${base_url}${path}`, tolerating a trailing slash on `base_url`; `path` starts with `/`. */
export function apiUrl(provider: ProviderConfig, path: string): string {
  return `${(provider.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, '')}${path}`
}

/** `${base_url}/chat/completions`. */
export function chatCompletionsUrl(provider: ProviderConfig): string {
  return apiUrl(provider, '/chat/completions')
}

/**
 * Request headers, built once per adapter (fetch copies them). The provider's own `headers` come
 * last so an operator can override anything, e.g. Azure's `api-key` scheme.
 */
export function requestHeaders(provider: ProviderConfig, accept: string): Headers {
  const headers = new Headers({ 'content-type': 'application/json', accept })
  if (provider.api_key) headers.set('authorization', `Bearer ${provider.api_key}`)
  for (const [name, value] of Object.entries(provider.headers ?? {})) headers.set(name, value)
  return headers
}

/** Some compatible servers answer 200 with `{"error": ...}`: that is the upstream failing. */
export function bodyError(json: unknown, label: string): GatewayError | undefined {
  if ((json as { error?: unknown } | null)?.error == null) return undefined
  return inBandError(label, describeUpstreamError(json) ?? 'no details given', errorCodeOf(json))
}
