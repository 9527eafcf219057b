/**
 * @module
 * How upstream failures become `GatewayError`s: the default mapper for OpenAI-style error bodies,
 * the shared 502 / 499 / 504 errors, and redaction of credential-like text (`sanitizeMessage`);
 * taking the provider's own key and host out is scrub.ts's. `http.ts` re-exports the public part;
 * adapters import from there.
 */
import { GATEWAY_FAILURE, GatewayError } from '../util/errors.ts'
import { errorCodeOf, withFacts } from './failure-facts.ts'

/**
 * What an upstream's HTTP status says on its own, the same at every provider (DESIGN §10:
 * transient = 5xx, 529 overloaded): the client-facing answer when the error body names nothing
 * more specific (no body of the provider's kind — a proxy's HTML page — or the provider's
 * catch-all type: OpenAI `server_error`, Anthropic `api_error`, Gemini `INTERNAL`).
 *
 * | upstream status       | client status, code       |
 * |-----------------------|---------------------------|
 * | 408, 504              | 504 `upstream_timeout`    |
 * | 503, 529              | 503 `upstream_overloaded` |
 * | 500, 502, other 5xx   | 502 `upstream_error`      |
 *
 * 503 rather than a provider's own 529: it is the status clients know and OpenAI SDKs retry.
 * null for any other status: the provider's own table decides.
 */
export type ServerFault = 'timeout' | 'overloaded' | 'internal'

export function serverFaultOf(status: number): ServerFault | null {
  if (status === 408 || status === 504) return 'timeout'
  if (status === 503 || status === 529) return 'overloaded'
  return status >= 500 ? 'internal' : null
}

/**
 * The default `mapError` for upstreams that answer with OpenAI-style error bodies (also reads
 * `{"error": "text"}`, `{"message"}`, `{"detail"}` and plain text). 429 → 429
 * `upstream_rate_limited`; 401 / 403 → 502 `upstream_auth_failed` (the gateway's own credentials
 * were refused, which the client cannot fix); 402 and 429 `insufficient_quota` → 502
 * `upstream_billing_error` (the operator's account is out of quota or credit: no `retry-after`, as
 * waiting will not help, and not a 429, which clients read as "slow down and retry"); other 4xx
 * keep their status, code and param; 408
 * and 5xx as `serverFaultOf` says, whatever code the body gives (an upstream's code is not one of
 * the gateway's: it stays in the message).
 */
export function openAIStyleError(status: number, bodyText: string, providerLabel: string): GatewayError {
  let body: unknown = bodyText
  try {
    body = JSON.parse(bodyText)
  } catch {}
  const up = extractUpstreamError(body)
  const detail = up.message ? sanitizeMessage(up.message) : `HTTP ${status}`
  const who = `Upstream '${providerLabel}'`
  if (status === 402 || (status === 429 && errorCodeOf(body) === 'insufficient_quota')) {
    return billingError(who, `(${status})`, detail)
  }
  if (status === 429) {
    return new GatewayError(429, 'upstream_rate_limited', `${who} is rate limiting requests: ${detail}`)
  }
  if (status === 401 || status === 403) {
    return new GatewayError(
      502,
      'upstream_auth_failed',
      `${who} refused the gateway's credentials (${status}): ${detail.replace(/[.!]$/, '')}. The operator must check the provider's api_key.`,
    )
  }
  const fault = serverFaultOf(status)
  if (fault === 'timeout') {
    return new GatewayError(504, 'upstream_timeout', `${who} timed out (${status}): ${detail}`)
  }
  if (status >= 400 && status < 500) {
    return new GatewayError(status, up.code ?? 'upstream_error', `${who} rejected the request: ${detail}`, {
      param: up.param,
    })
  }
  if (fault === 'overloaded') {
    return new GatewayError(503, 'upstream_overloaded', `${who} is overloaded (HTTP ${status}): ${detail}`)
  }
  return new GatewayError(502, 'upstream_error', `${who} failed (HTTP ${status}): ${detail}`)
}

/**
 * 502 `upstream_billing_error`: the operator's provider account is out of quota or credit. `how`
 * says how it came (`(429)`, `in-band`).
 */
function billingError(who: string, how: string, detail: string): GatewayError {
  return new GatewayError(
    502,
    'upstream_billing_error',
    `${who} refused the gateway's account for quota or billing (${how}): ${detail.replace(/[.!]$/, '')}. The operator must check the provider account's plan and billing; retrying will not help until then.`,
  )
}

/**
 * An OpenAI-style error that came with HTTP 200: a body carrying `{"error": …}` instead of a
 * completion, an error chunk in a chat stream, the Responses wire's `error` / `response.failed`.
 * With no status to read, the provider's `code` decides as it would beside an error status:
 * `insufficient_quota` is 502 `upstream_billing_error` (as a 429 `insufficient_quota` is), any
 * other 502 `upstream_error` with the provider's words. The code stays with the error for the
 * attempt loop (`insufficient_quota`: the key rests).
 *
 * @param detail the provider's message, already redacted (`describeUpstreamError`).
 * @param where `' mid-stream'` for a stream's event, `''` for a body.
 */
export function inBandError(label: string, detail: string, code: string | null, where = ''): GatewayError {
  const who = `Upstream '${label}'`
  const err =
    code === 'insufficient_quota'
      ? billingError(who, `in-band${where}`, detail)
      : new GatewayError(502, 'upstream_error', `${who} failed${where}: ${detail}`)
  return code === null ? err : withFacts(err, { code, message: detail })
}

/** 502 `upstream_invalid_response`: the upstream answered, but not in its own protocol. */
export function invalidResponse(providerLabel: string, what: string, detail?: string): GatewayError {
  return new GatewayError(
    502,
    'upstream_invalid_response',
    `Upstream '${providerLabel}' sent an invalid response: ${what}`,
    { detail },
  )
}

/** 502 `upstream_stream_interrupted`: the upstream's body ended before its protocol says it is done. */
export function streamInterrupted(
  providerLabel: string,
  what = 'the connection was closed mid-response',
  detail?: string,
): GatewayError {
  return new GatewayError(
    502,
    'upstream_stream_interrupted',
    `Upstream '${providerLabel}' stream was interrupted: ${what}. Retry the request.`,
    { detail },
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

/**
 * Whether a value thrown around an upstream call came from the network: Bun's fetch and body
 * readers throw a `TypeError` with a string `code` (ECONNRESET, ECONNREFUSED, InvalidHTTPResponse,
 * ZlibError …), an aborted or timed-out signal a `DOMException`. An error without a code (a
 * `TypeError` of `null.type`, a `RangeError`) or a value that is no `Error` at all (a string, a
 * plain object, even one with a `code`) was thrown by the gateway's own code.
 */
export function fromTheWire(error: unknown): boolean {
  return (
    error instanceof DOMException ||
    (error instanceof Error && typeof (error as { code?: unknown }).code === 'string')
  )
}

/**
 * 500 `internal_error` for what the gateway's own code threw during an attempt (a translator or
 * encoder meeting an answer it cannot handle): failure kind `internal`, never the upstream's.
 * The stack goes to the log only (`detail`).
 */
export function gatewayFault(error: unknown): GatewayError {
  const err = new GatewayError(
    500,
    GATEWAY_FAILURE.internal,
    'Internal error; it has been logged with this request id.',
    {
      type: 'api_error',
      detail: (error as Error | null)?.stack ?? String(error),
    },
  )
  return withFacts(err, { gateway: true })
}

/**
 * 502 `upstream_unreachable`. The client learns which provider and what kind of failure, never
 * the upstream's address: Bun's messages carry the whole URL, query included. The full text goes
 * to the server log with the request id (`GatewayError.detail`).
 */
export function unreachableError(label: string, err: unknown, secret?: string): GatewayError {
  const detail = networkErrorDetail(err, secret)
  if ((err as { code?: unknown } | null)?.code === 'Malformed_HTTP_Response') {
    return invalidResponse(label, 'malformed HTTP response', detail)
  }
  return new GatewayError(
    502,
    'upstream_unreachable',
    `Could not reach upstream '${label}': ${describeNetworkError(err)}. Check that the provider is up and its base_url is right.`,
    { detail },
  )
}

/** Bun's error codes, in words. Codes not listed are shown as they are (a code names no host). */
const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  ETIMEDOUT: 'connection timed out',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ConnectionRefused: 'connection refused',
  ConnectionClosed: 'connection closed',
  FailedToOpenSocket: 'could not open a socket',
  Malformed_HTTP_Response: 'malformed HTTP response',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate chain is self-signed',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host',
}

/**
 * `what happened (CODE)` from a network error, for clients: built from the error's code alone,
 * never from its message, which may name the upstream's host, port, path and query.
 */
export function describeNetworkError(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code !== 'string' || !/^[A-Za-z0-9_]{1,64}$/.test(code)) return 'network error'
  const words = NETWORK_ERRORS[code]
  return words ? `${words} (${code})` : `network error (${code})`
}

/** The network error's own text and URL, for the server log: redacted of keys, address kept. */
export function networkErrorDetail(err: unknown, secret?: string): string {
  let text = (err instanceof Error ? err.message : String(err)).replace(
    /\s*For more information, pass `verbose: true`.*$/s,
    '',
  )
  const url = (err as { path?: unknown } | null)?.path
  if (typeof url === 'string' && !text.includes(url)) text += ` (${url})`
  return sanitizeMessage(secret && secret.length >= 4 ? text.split(secret).join('***') : text, 1000)
}

/** Longest `retry-after` relayed from an upstream, in seconds. */
export const MAX_RETRY_AFTER_S = 3600

/**
 * An upstream's `retry-after` (delta-seconds or an HTTP date) as whole seconds in
 * [0, MAX_RETRY_AFTER_S]; `undefined` when it is neither, so nothing is relayed.
 */
export function clampRetryAfter(value: string | null | undefined, now = Date.now()): string | undefined {
  const v = value?.trim()
  if (!v) return undefined
  let seconds: number
  if (/^\d+(\.\d+)?$/.test(v)) seconds = Number(v)
  else {
    const at = Date.parse(v)
    if (Number.isNaN(at) || !/[A-Za-z]/.test(v)) return undefined
    seconds = (at - now) / 1000
  }
  return String(Math.min(MAX_RETRY_AFTER_S, Math.max(0, Math.ceil(seconds))))
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
