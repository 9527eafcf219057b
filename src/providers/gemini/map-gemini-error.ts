/**
 * @module
 * Gemini errors — non-2xx bodies and error objects inside a stream, both
 * `{error: {code, message, status, details}}` — → `GatewayError`.
 *
 * | Gemini `status` (HTTP)                         | Switchyard status, code            | provider message |
 * |------------------------------------------------|------------------------------------|------------------|
 * | INVALID_ARGUMENT, OUT_OF_RANGE (400)           | 400 `upstream_invalid_request`     | kept             |
 * | … with reason API_KEY_* or text "API key"      | 502 `upstream_auth_failed`         | replaced         |
 * | UNAUTHENTICATED (401), PERMISSION_DENIED (403) | 502 `upstream_auth_failed`         | replaced         |
 * | FAILED_PRECONDITION (400: billing, region; 402)| 502 `upstream_precondition_failed` | kept             |
 * | NOT_FOUND (404: model name)                    | 502 `upstream_not_found`           | kept             |
 * | RESOURCE_EXHAUSTED (429)                       | 429 `upstream_rate_limited` ¹      | kept             |
 * | UNAVAILABLE (503; 529)                         | 503 `upstream_overloaded`          | kept             |
 * | DEADLINE_EXCEEDED (504; 408)                   | 504 `upstream_timeout`             | kept             |
 * | INTERNAL (500, 502) and anything else          | 502 `upstream_error`               | kept             |
 *
 * ¹ with `retry-after` taken from the body's `RetryInfo.retryDelay`.
 *
 * Key and account problems are the operator's: the caller gets a 502 that says so, never
 * Google's text about our key. An `INTERNAL` body (Google's catch-all) or none at all leaves a 408
 * or 5xx to its HTTP status, as at every provider (`serverFaultOf`). Kept messages lose the configured key and anything key-shaped (`sanitizeMessage`).
 */
import type { ProviderConfig } from '../../config/schema.ts'
import type { GatewayError } from '../../util/errors.ts'
import {
  commonErrorRules,
  type ErrorNames,
  type ErrorRule,
  errorFromRule,
  errorOf,
  parseErrorBody,
} from '../shared/error-rules.ts'
import type { GeminiErrorBody } from './gemini-types.ts'

const AUTH_FAILED: ErrorRule = {
  status: 502,
  code: 'upstream_auth_failed',
  message: (_d, p) =>
    `Gemini rejected the gateway's API key for provider '${p.prefix}'. This is a gateway configuration problem: ask the operator to check that provider's api_key.`,
}

const COMMON = commonErrorRules('Gemini')

const RULES: Record<string, ErrorRule> = {
  INVALID_ARGUMENT: COMMON.invalidRequest,
  OUT_OF_RANGE: COMMON.invalidRequest,
  UNAUTHENTICATED: AUTH_FAILED,
  PERMISSION_DENIED: AUTH_FAILED,
  FAILED_PRECONDITION: {
    status: 502,
    code: 'upstream_precondition_failed',
    message: (d, p) =>
      `Gemini refused to serve provider '${p.prefix}': ${d} Ask the operator to check that account.`,
  },
  NOT_FOUND: COMMON.notFound,
  RESOURCE_EXHAUSTED: COMMON.rateLimited,
  UNAVAILABLE: COMMON.overloaded,
  DEADLINE_EXCEEDED: COMMON.timeout,
  INTERNAL: COMMON.internal,
}

const NAMES: ErrorNames = {
  rules: RULES,
  catchAll: 'INTERNAL',
  // 408 and 5xx mean at Google what they mean at every provider (`serverFaultOf`).
  byFault: { timeout: 'DEADLINE_EXCEEDED', overloaded: 'UNAVAILABLE', internal: 'INTERNAL' },
  // The `status` Google documents for each 4xx HTTP status, for bodies that lack one.
  byStatus: {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    402: 'FAILED_PRECONDITION',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    429: 'RESOURCE_EXHAUSTED',
  },
  otherwise: 'INVALID_ARGUMENT',
}

/**
 * A non-2xx response from Gemini → `GatewayError`. The body's `status` decides, unless it is the
 * catch-all `INTERNAL` (or missing, or unknown): then the HTTP status does, so a 503 is overloaded
 * and a 504 a timeout whatever status the body names.
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
  const body = parseErrorBody<GeminiErrorBody>(bodyText)
  return mapGeminiError(body ?? {}, provider, httpStatus, `HTTP ${httpStatus}.`)
}

/**
 * An error object Gemini sent instead of a response (in a stream, or a 200 body); `INTERNAL` or
 * none is the HTTP status's (`errorOf`), `INTERNAL` where there is none.
 */
export function mapGeminiError(
  body: GeminiErrorBody,
  provider: ProviderConfig,
  httpStatus?: number,
  fallbackMessage = 'error without a message.',
): GatewayError {
  const error = body.error ?? {}
  const detail = (error.message ?? fallbackMessage).trim()
  if (isKeyProblem(body)) return errorFromRule(AUTH_FAILED, detail, provider)
  return errorOf(NAMES, error.status, detail, provider, httpStatus, retryAfterOf(body))
}

/**
 * Google says how long to wait in a `RetryInfo` detail (`"retryDelay": "37s"`), not in a
 * `retry-after` header; clients (and OpenAI SDKs' retries) read the header.
 */
function retryAfterOf(body: GeminiErrorBody): Record<string, string> | undefined {
  const info = body.error?.details?.find((d) => d['@type']?.endsWith('google.rpc.RetryInfo'))
  const seconds =
    typeof info?.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(info.retryDelay)?.[1] : undefined
  return seconds === undefined ? undefined : { 'retry-after': String(Math.ceil(Number(seconds))) }
}

/** Google reports a bad key as 400 INVALID_ARGUMENT; only the reason or the text tells. */
function isKeyProblem(body: GeminiErrorBody): boolean {
  const reasons = (body.error?.details ?? []).map((d) => d.reason ?? '')
  return reasons.some((r) => r.startsWith('API_KEY_')) || /\bapi key\b/i.test(body.error?.message ?? '')
}
