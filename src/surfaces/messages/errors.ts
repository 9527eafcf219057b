/**
 * @module
 * Errors in Anthropic's shape (DESIGN §6): `{"type": "error", "error": {"type", "message"},
 * "request_id"}`, with Anthropic's type for each status — 400 invalid_request_error,
 * 401 authentication_error, 402 billing_error (a spent budget), 403 permission_error, 404 not_found_error, 413 request_too_large,
 * 429 rate_limit_error, 504 timeout_error, 529 overloaded_error, other 5xx api_error. An
 * overloaded upstream (503 `upstream_overloaded` on the OpenAI surfaces), or one whose circuit is
 * open (503 `upstream_circuit_open`), is Anthropic's 529 here, which its SDKs and Claude Code retry.
 */
import { TYPE_BY_STATUS as ANTHROPIC_4XX_TYPES } from '../../providers/anthropic/map-anthropic-error.ts'
import { errorHeaders, GatewayError } from '../../util/errors.ts'

/** Anthropic's documented type for each 4xx status, and the two 5xx with types of their own. */
const TYPE_BY_STATUS: Record<number, string> = {
  ...ANTHROPIC_4XX_TYPES,
  504: 'timeout_error',
  529: 'overloaded_error',
}

function anthropicType(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
}

/** Anthropic's "try again soon" status: an overloaded upstream, or one whose circuit is open. */
const OVERLOADED = new Set(['upstream_overloaded', 'upstream_circuit_open'])

function statusOf(err: GatewayError): number {
  return OVERLOADED.has(err.code) ? 529 : err.status
}

/** The body; `request_id` is added by `messagesErrorResponse` when known. */
export function anthropicErrorBody(err: GatewayError, requestId?: string) {
  const body: { type: 'error'; error: { type: string; message: string }; request_id?: string } = {
    type: 'error',
    error: { type: anthropicType(statusOf(err)), message: err.message },
  }
  if (requestId) body.request_id = requestId
  return body
}

export function messagesErrorResponse(err: GatewayError, headers: Record<string, string> = {}): Response {
  const h = errorHeaders(err, headers, 'application/json')
  // Which check refused, in the gateway's own vocabulary (Anthropic's body has no code field).
  h.set('x-switchyard-error-code', err.code)
  const rid = headers['x-request-id']
  return new Response(JSON.stringify(anthropicErrorBody(err, rid)), { status: statusOf(err), headers: h })
}

export { GatewayError }
