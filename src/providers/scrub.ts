/**
 * @module
 * What leaves the gateway of an upstream's refusal or error event without the provider's own
 * secrets: its API key and its host (with scheme, port and path) wherever the text names them.
 * Credential-like strings in general are upstream-errors.ts's `sanitizeMessage`.
 *
 * @example
 * throw scrubbed(err, ctx.provider)
 */
import { GatewayError } from '../util/errors.ts'
import { factsOf, withFacts } from './failure-facts.ts'
import { clampRetryAfter, sanitizeMessage } from './upstream-errors.ts'

/**
 * The last step for an upstream's refusal: removes the provider's own key wherever a (possibly
 * foreign) mapper let it through and the provider's host (with its `:port`) wherever the text
 * names it, and clamps a `retry-after`.
 */
export function scrubbed(err: GatewayError, provider: { api_key?: string; base_url?: string }): GatewayError {
  const key = provider.api_key
  let text = key && key.length >= 4 ? err.message.split(key).join('***') : err.message
  const host = hostPattern(provider.base_url)
  if (host) text = text.replace(host, '<upstream>')
  const message = sanitizeMessage(text, 1000)
  // The log's detail keeps the address but never the key (the gateway's own stack may quote it).
  const detail =
    key && key.length >= 4 && err.detail?.includes(key) ? err.detail.split(key).join('***') : err.detail
  const retryAfter = err.headers?.['retry-after']
  const clamped = retryAfter === undefined ? undefined : clampRetryAfter(retryAfter)
  if (message === err.message && clamped === retryAfter && detail === err.detail) return err
  let headers = err.headers
  if (clamped !== retryAfter) {
    const { 'retry-after': _, ...rest } = err.headers!
    headers = clamped === undefined ? rest : { ...rest, 'retry-after': clamped }
  }
  const clean = new GatewayError(err.status, err.code, message, {
    param: err.param,
    type: err.type,
    headers,
    detail,
  })
  // What the attempt loop classifies by stays with the error (an in-band code rests a key).
  const facts = factsOf(err)
  return facts ? withFacts(clean, facts) : clean
}

/**
 * An upstream event relayed as it came (a pass-through's `error` or `response.failed` after
 * content) without the provider's key or address: each string in its JSON loses them. null when
 * the event names neither, so the bytes go on untouched; an event that is not JSON is replaced
 * by `fallback` when it names either.
 *
 * @example scrubbedEventData('{"error":{"message":"bad key sk-x at https://api.host/v1"}}', provider, fb)
 *          // '{"error":{"message":"bad key *** at <upstream>"}}'
 */
export function scrubbedEventData(
  data: string,
  provider: { api_key?: string; base_url?: string },
  fallback: () => string,
): string | null {
  const key = provider.api_key && provider.api_key.length >= 4 ? provider.api_key : undefined
  const host = hostPattern(provider.base_url)
  const clean = (text: string) => {
    const keyless = key ? text.split(key).join('***') : text
    return host ? keyless.replace(host, '<upstream>') : keyless
  }
  if (clean(data) === data) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(data)
  } catch {
    return fallback()
  }
  const walk = (v: unknown): unknown =>
    typeof v === 'string'
      ? clean(v)
      : Array.isArray(v)
        ? v.map(walk)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
          : v
  return JSON.stringify(walk(parsed))
}

/**
 * The base_url's host, with any scheme before it and any `:port`, path and query after it, if the
 * host is long enough not to match ordinary words.
 */
function hostPattern(baseUrl: string | undefined): RegExp | undefined {
  if (!baseUrl) return undefined
  try {
    const host = new URL(baseUrl).hostname
    if (host.length < 4) return undefined
    const escaped = host.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    return new RegExp(`(?:[a-z][a-z0-9+.-]*://)?${escaped}(?::\\d+)?(?:[/?#][^\\s"'<>]*)?`, 'gi')
  } catch {
    return undefined
  }
}
