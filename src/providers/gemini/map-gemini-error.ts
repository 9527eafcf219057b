/**
 * @module
 * Gemini errors — non-2xx bodies and error objects inside a stream, both
 * `{error: {code, message, status, details}}` — → `GatewayError`.
 *
 * | Gemini `status` (HTTP)                     | Switchyard status, code              | provider message |
 * |--------------------------------------------|--------------------------------------|------------------|
 * | INVALID_ARGUMENT, OUT_OF_RANGE (400)       | 400 `upstream_invalid_request`       | kept             |
 * | … with reason API_KEY_INVALID / "API key"  | 502 `upstream_auth_failed`           | replaced         |
 * | UNAUTHENTICATED (401), PERMISSION_DENIED (403) | 502 `upstream_auth_failed`       | replaced         |
 * | FAILED_PRECONDITION (400: billing, region) | 502 `upstream_precondition_failed`   | kept             |
 * | NOT_FOUND (404: model name)                | 502 `upstream_not_found`             | kept             |
 * | RESOURCE_EXHAUSTED (429)                   | 429 `upstream_rate_limited`          | kept             |
 * | UNAVAILABLE (503)                          | 503 `upstream_overloaded`            | kept             |
 * | DEADLINE_EXCEEDED (504)                    | 504 `upstream_timeout`               | kept             |
 * | INTERNAL (500) and anything else           | 502 `upstream_error`                 | kept             |
 *
 * Key and account problems are the operator's: the caller gets a 502 that says so, never
 * Google's text about our key. Kept messages lose the configured key and anything key-shaped (`sanitizeMessage`).
 */
import type { ProviderConfig } from '../../config/schema.ts'
import { GatewayError } from '../../util/errors.ts'
import { sanitizeMessage } from '../http.ts'
import type { GeminiErrorBody } from './gemini-types.ts'

interface ErrorRule {
  status: number
  code: string
  message: (detail: string, provider: ProviderConfig) => string
}

const AUTH_FAILED: ErrorRule = {
  status: 502,
  code: 'upstream_auth_failed',
  message: (_d, p) =>
    `Gemini rejected the gateway's API key for provider '${p.prefix}'. This is a gateway configuration problem: ask the operator to check that provider's api_key.`,
}

const INVALID: ErrorRule = {
  status: 400,
  code: 'upstream_invalid_request',
  message: (d) => `Gemini rejected the request: ${d}`,
}

const INTERNAL: ErrorRule = {
  status: 502,
  code: 'upstream_error',
  message: (d) => `Gemini failed with an internal error: ${d} Retry; if it persists, try another model.`,
}

const RULES: Record<string, ErrorRule> = {
  INVALID_ARGUMENT: INVALID,
  OUT_OF_RANGE: INVALID,
  UNAUTHENTICATED: AUTH_FAILED,
  PERMISSION_DENIED: AUTH_FAILED,
  FAILED_PRECONDITION: {
    status: 502,
    code: 'upstream_precondition_failed',
    message: (d, p) =>
      `Gemini refused to serve provider '${p.prefix}': ${d} Ask the operator to check that account.`,
  },
  NOT_FOUND: {
    status: 502,
    code: 'upstream_not_found',
    message: (d, p) =>
      `Gemini does not know what was asked for: ${d} Ask the operator to check the upstream model names of provider '${p.prefix}'.`,
  },
  RESOURCE_EXHAUSTED: {
    status: 429,
    code: 'upstream_rate_limited',
    message: (d) => `Gemini is rate limiting this gateway: ${d} Retry after a short wait.`,
  },
  UNAVAILABLE: {
    status: 503,
    code: 'upstream_overloaded',
    message: (d) => `Gemini is temporarily unavailable: ${d} Retry after a short wait.`,
  },
  DEADLINE_EXCEEDED: {
    status: 504,
    code: 'upstream_timeout',
    message: (d) => `Gemini timed out: ${d} Retry, or ask for fewer tokens.`,
  },
  INTERNAL,
}

const STATUS_BY_HTTP: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
}

/**
 * A non-2xx response from Gemini → `GatewayError`.
 *
 * @example
 * mapGeminiHttpError(429, '{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}', provider)
 * // GatewayError 429 upstream_rate_limited
 */
export function mapGeminiHttpError(
  httpStatus: number,
  bodyText: string,
  provider: ProviderConfig,
): GatewayError {
  const body = parseErrorBody(bodyText)
  const fallback = STATUS_BY_HTTP[httpStatus] ?? (httpStatus >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT')
  return mapGeminiError(body ?? {}, provider, fallback, `HTTP ${httpStatus}.`)
}

/** An error object Gemini sent instead of a response (in a stream, or a 200 body). */
export function mapGeminiError(
  body: GeminiErrorBody,
  provider: ProviderConfig,
  fallbackStatus = 'INTERNAL',
  fallbackMessage = 'error without a message.',
): GatewayError {
  const error = body.error ?? {}
  const status = error.status && RULES[error.status] ? error.status : fallbackStatus
  const detail = (error.message ?? fallbackMessage).trim()
  const rule = isKeyProblem(body) ? AUTH_FAILED : (RULES[status] ?? INTERNAL)
  const clean = cleanDetail(detail, provider.api_key)
  return new GatewayError(rule.status, rule.code, rule.message(clean, provider))
}

/** Google reports a bad key as 400 INVALID_ARGUMENT; only the reason or the text tells. */
function isKeyProblem(body: GeminiErrorBody): boolean {
  const reasons = (body.error?.details ?? []).map((d) => d.reason ?? '')
  return reasons.some((r) => r.startsWith('API_KEY_')) || /\bapi key\b/i.test(body.error?.message ?? '')
}

/** Gemini sometimes wraps the body in an array (`[{error: …}]`). */
function parseErrorBody(text: string): GeminiErrorBody | null {
  try {
    const body = JSON.parse(text) as unknown
    const first = Array.isArray(body) ? body[0] : body
    return first && typeof first === 'object' ? (first as GeminiErrorBody) : null
  } catch {
    return null
  }
}

/** `x-api-key: …`, `api_key=…`: header-style secrets `sanitizeMessage` does not know. */
const LABELLED_SECRET = /\b((?:x-api-key|x-goog-api-key|api[_-]?key)\s*[:=]\s*)[^\s"',;]{8,}/gi

/** The provider's text without our key or anything key-shaped, ending as a sentence. */
function cleanDetail(detail: string, apiKey: string | undefined): string {
  const keyless = apiKey && apiKey.length >= 4 ? detail.split(apiKey).join('***') : detail
  return sanitizeMessage(keyless.replace(LABELLED_SECRET, '$1***')).replace(/([^.!?…])$/, '$1.')
}
