/**
 * @module
 * Where and how Switchyard reaches Anthropic: base URL, endpoint and headers.
 */
import type { ProviderConfig } from '../../config/schema.ts'

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com'
export const ANTHROPIC_VERSION = '2023-06-01'

/**
 * `{base_url}/v1/messages`. A `base_url` that already ends in `/v1` is accepted too, since that
 * is how OpenAI-style base URLs are usually written.
 *
 * @example
 * anthropicMessagesUrl({ base_url: 'http://127.0.0.1:9000/' } as ProviderConfig) // 'http://127.0.0.1:9000/v1/messages'
 */
export function anthropicMessagesUrl(provider: ProviderConfig): string {
  const base = (provider.base_url ?? ANTHROPIC_BASE_URL).replace(/\/+$/, '')
  return base.endsWith('/v1') ? `${base}/messages` : `${base}/v1/messages`
}

/** `{base_url}{path}` for a path under the API root (`/v1/messages/count_tokens`), as above. */
export function anthropicUrl(provider: ProviderConfig, path: string): string {
  const base = (provider.base_url ?? ANTHROPIC_BASE_URL).replace(/\/+$/, '')
  return `${base.endsWith('/v1') ? base.slice(0, -3) : base}${path}`
}

/** The operator's extra headers first, so they cannot displace the key or the API version. */
export function anthropicHeaders(provider: ProviderConfig): Headers {
  const headers = new Headers(provider.headers)
  headers.set('content-type', 'application/json')
  headers.set('anthropic-version', provider.anthropic_version ?? ANTHROPIC_VERSION)
  if (provider.api_key) headers.set('x-api-key', provider.api_key)
  return headers
}
