/**
 * @module
 * How upstream failures become `GatewayError`s: the default mapper for OpenAI-style error bodies,
 * the shared 502 / 499 / 504 errors, and redaction, so that no message carries a provider's key.
 * `http.ts` re-exports the public part; adapters import from there.
 */
import { GatewayError } from '../util/errors.ts'

/**
 * The default `mapError` for upstreams that answer with OpenAI-style error bodies (also reads
 * `{"error": "text"}`, `{"message"}`, `{"detail"}` and plain text). 429 → 429
 * `upstream_rate_limited`; 408 / 504 → 504; 401 / 403 → 502 `upstream_auth_failed` (the
 * gateway's own credentials were refused, which the client cannot fix); other 4xx keep their
 * status, code and param; 5xx and anything else → 502 `upstream_error`.
 */
export function openAIStyleError(status: number, bodyText: string, providerLabel: string): GatewayError {
  let body: unknown = bodyText
  try {
    body = JSON.parse(bodyText)
  } catch {}
  const up = extractUpstreamError(body)
  const detail = up.message ? sanitizeMessage(up.message) : `HTTP ${status}`
  const who = `Upstream '${providerLabel}'`
  if (status === 429) {
    return new GatewayError(429, 'upstream_rate_limited', `${who} is rate limiting requests: ${detail}`)
  }
  if (status === 408 || status === 504) {
    return new GatewayError(504, 'upstream_timeout', `${who} timed out (${status}): ${detail}`)
  }
  if (status === 401 || status === 403) {
    return new GatewayError(
      502,
      'upstream_auth_failed',
      `${who} refused the gateway's credentials (${status}): ${detail}. The operator must check the provider's api_key.`,
    )
  }
  if (status >= 400 && status < 500) {
    return new GatewayError(status, up.code ?? 'upstream_error', `${who} rejected the request: ${detail}`, {
      param: up.param,
    })
  }
  return new GatewayError(502, 'upstream_error', `${who} failed (HTTP ${status}): ${detail}`)
}

/** 502 `upstream_invalid_response`: the upstream answered, but not in its own protocol. */
export function invalidResponse(providerLabel: string, what: string): GatewayError {
  return new GatewayError(
    502,
    'upstream_invalid_response',
    `Upstream '${providerLabel}' sent an invalid response: ${what}`,
  )
}

/** 502 `upstream_stream_interrupted`: the upstream's body ended before its protocol says it is done. */
export function streamInterrupted(
  providerLabel: string,
  detail = 'the connection was closed mid-response',
): GatewayError {
  return new GatewayError(
    502,
    'upstream_stream_interrupted',
    `Upstream '${providerLabel}' stream was interrupted: ${detail}. Retry the request.`,
  )
}

/**
 * The error for an aborted `ctx.signal`: its reason if that is already a `GatewayError`, 504 for
 * a timeout signal, else 499 `client_closed_request` named `AbortError` so generic abort checks
 * recognise it.
 */
export function abortError(reason: unknown): GatewayError {
  if (reason instanceof GatewayError) return reason
  if (reason instanceof DOMException && reason.name === 'TimeoutError') {
    return new GatewayError(504, 'upstream_timeout', 'The upstream call timed out.')
  }
  const err = new GatewayError(499, 'client_closed_request', 'The client closed the request.')
  err.name = 'AbortError'
  return err
}

export function unreachableError(url: string, label: string, err: unknown): GatewayError {
  let host = 'its base_url'
  try {
    host = new URL(url).host // never the path or query: some providers put the key in the query
  } catch {}
  return new GatewayError(
    502,
    'upstream_unreachable',
    `Could not reach upstream '${label}' at ${host}: ${describeNetworkError(err)}. Check that the provider is up and its base_url is right.`,
  )
}

/** `CODE (what happened)` from a network error, without Bun's "pass verbose: true" hint. */
export function describeNetworkError(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code
  let message = (err instanceof Error ? err.message : String(err))
    .replace(/\s*For more information, pass `verbose: true`.*$/s, '')
    .replace(/\.+$/, '')
  if (typeof code === 'string') {
    if (message.startsWith(`${code}:`)) message = message.slice(code.length + 1).trim()
    message = `${code} (${message})`
  }
  return sanitizeMessage(message, 200)
}

interface UpstreamErrorInfo {
  message: string | undefined
  code: string | undefined
  param: string | null
}

/**
 * The provider's own message, redacted and truncated, from an error body (parsed JSON or text).
 * For error events inside a stream as much as for error responses.
 */
export function describeUpstreamError(body: unknown): string | undefined {
  const message = extractUpstreamError(body).message
  return message === undefined ? undefined : sanitizeMessage(message)
}

function extractUpstreamError(body: unknown): UpstreamErrorInfo {
  const info: UpstreamErrorInfo = { message: undefined, code: undefined, param: null }
  if (typeof body === 'string') {
    info.message = body.trim() || undefined
    return info
  }
  if (Array.isArray(body)) body = body[0] // Gemini sometimes wraps its error in an array
  const obj = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>
  const e = obj.error
  if (typeof e === 'string') info.message = e
  else if (e && typeof e === 'object') {
    const eo = e as Record<string, unknown>
    if (typeof eo.message === 'string') info.message = eo.message
    const code =
      typeof eo.code === 'string'
        ? eo.code
        : typeof eo.status === 'string'
          ? eo.status.toLowerCase()
          : undefined
    if (code && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) info.code = code
    if (typeof eo.param === 'string') info.param = eo.param
  }
  if (info.message === undefined) {
    const m = obj.message ?? obj.detail
    if (m !== undefined) info.message = typeof m === 'string' ? m : JSON.stringify(m)
    else if (body != null) info.message = JSON.stringify(body)
  }
  return info
}

const SECRETS: Array<[RegExp, string]> = [
  [/\b(sk|pk|rk|gsk|xai|hf)([-_])[A-Za-z0-9_-]{6,}/g, '$1$2***'],
  [/\bAIza[0-9A-Za-z_-]{20,}/g, 'AIza***'],
  [/(bearer\s+)[^\s"',;]+/gi, '$1***'],
  [/([?&](?:key|api[_-]?key|token|access_token)=)[^&\s"']+/gi, '$1***'],
  // Long opaque tokens (hex or base62 keys). Hyphenated names such as model ids or UUIDs survive.
  [/\b[A-Za-z0-9]{32,}\b/g, '***'],
]

/** Redacts anything that looks like a credential and truncates to `max` characters. */
export function sanitizeMessage(text: string, max = 500): string {
  let out = text.trim()
  for (const [re, sub] of SECRETS) out = out.replace(re, sub)
  return out.length > max ? `${out.slice(0, max)}…` : out
}

/** Removes the provider's own key wherever a (possibly foreign) mapper let it through. */
export function withoutKey(err: GatewayError, key: string | undefined): GatewayError {
  const message = sanitizeMessage(
    key && key.length >= 4 ? err.message.split(key).join('***') : err.message,
    1000,
  )
  if (message === err.message) return err
  return new GatewayError(err.status, err.code, message, {
    param: err.param,
    type: err.type,
    headers: err.headers,
  })
}
