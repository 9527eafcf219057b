/**
 * @module
 * Errors in Google's shape (DESIGN §14): `{"error": {"code", "message", "status", "details"}}`,
 * the google.rpc status for each HTTP status — 400 INVALID_ARGUMENT, 401 UNAUTHENTICATED,
 * 403 PERMISSION_DENIED, 404 NOT_FOUND, 429 RESOURCE_EXHAUSTED, 499 CANCELLED, 500 INTERNAL,
 * 501 UNIMPLEMENTED, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED. The gateway's own code rides in an
 * `ErrorInfo` detail (`reason`) and the `x-switchyard-error-code` header; the field at fault in a
 * `BadRequest` detail's `fieldViolations`, as Google reports one; a wait (`retry-after`) in a
 * `RetryInfo` detail's `retryDelay` ("12s"), where Google's clients read it. A 413 says
 * INVALID_ARGUMENT, the status Google gives an oversized payload (with HTTP 400 there).
 */
import { errorHeaders, type GatewayError } from '../../util/errors.ts'

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'RESOURCE_EXHAUSTED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
}

/** Google's status name for an HTTP status (other 4xx FAILED_PRECONDITION, other 5xx INTERNAL). */
export function googleStatus(status: number): string {
  return STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION')
}

/**
 * @example
 * geminiErrorBody(new GatewayError(429, 'rate_limit_exceeded', 'Too many requests.'))
 * // { error: { code: 429, message: 'Too many requests.', status: 'RESOURCE_EXHAUSTED', details: [...] } }
 */
export function geminiErrorBody(err: GatewayError, retryAfter?: string | null) {
  const details: Array<Record<string, unknown>> = [
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: err.code, domain: 'switchyard' },
  ]
  if (err.param)
    details.push({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: err.param, description: err.message }],
    })
  const seconds = retryAfter == null ? Number.NaN : Number(retryAfter)
  if (Number.isFinite(seconds) && seconds >= 0)
    details.push({
      '@type': 'type.googleapis.com/google.rpc.RetryInfo',
      retryDelay: `${Math.ceil(seconds)}s`,
    })
  return { error: { code: err.status, message: err.message, status: googleStatus(err.status), details } }
}

export function geminiErrorResponse(err: GatewayError, headers: Record<string, string> = {}): Response {
  const h = errorHeaders(err, headers, 'application/json; charset=UTF-8')
  h.set('x-switchyard-error-code', err.code)
  const body = geminiErrorBody(err, h.get('retry-after'))
  return new Response(JSON.stringify(body), { status: err.status, headers: h })
}
