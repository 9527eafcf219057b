/**
 * @module
 * Where and how Switchyard reaches the Gemini API: base URL, endpoints and headers.
 */
import type { ProviderConfig } from '../../config/schema.ts'

export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com'

/**
 * `{base_url}/v1beta/models/{model}:generateContent`, or `:streamGenerateContent?alt=sse`.
 * A `base_url` that already ends in an API version (`/v1beta`, `/v1`) keeps it.
 *
 * @example
 * geminiUrl({} as ProviderConfig, 'gemini-2.5-flash', true)
 * // 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'
 */
export function geminiUrl(provider: ProviderConfig, model: string, stream: boolean): string {
  const base = geminiApiRoot(provider)
  const name = encodeURIComponent(model.replace(/^models\//, ''))
  return stream
    ? `${base}/models/${name}:streamGenerateContent?alt=sse`
    : `${base}/models/${name}:generateContent`
}

/** `{base_url}` with an API version: its own (`/v1beta`, `/v1`), else `/v1beta`. */
export function geminiApiRoot(provider: ProviderConfig): string {
  const base = (provider.base_url ?? GEMINI_BASE_URL).replace(/\/+$/, '')
  return /\/v1(alpha|beta)?\d*$/.test(base) ? base : `${base}/v1beta`
}

/** The key goes in a header, never the query string, so it stays out of URLs and logs. */
export function geminiHeaders(provider: ProviderConfig): Headers {
  const headers = new Headers(provider.headers)
  headers.set('content-type', 'application/json')
  if (provider.api_key) headers.set('x-goog-api-key', provider.api_key)
  return headers
}
