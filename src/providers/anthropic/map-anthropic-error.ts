/**
 * @module
 * Anthropic errors — non-2xx bodies and the stream's `error` event, both
 * `{type: 'error', error: {type, message}}` — → `GatewayError`.
 *
 * | Anthropic `error.type` (HTTP)  | Switchyard status, code                 | provider message |
 * |--------------------------------|-----------------------------------------|------------------|
 * | invalid_request_error (400)    | 400 `upstream_invalid_request`          | kept             |
 * | request_too_large (413)        | 413 `upstream_request_too_large`        | kept             |
 * | rate_limit_error (429)         | 429 `upstream_rate_limited`             | kept             |
 * | overloaded_error (529; 503)    | 503 `upstream_overloaded`               | kept             |
 * | timeout_error (504; 408)       | 504 `upstream_timeout`                  | kept             |
 * | api_error (500, 502) and unknown | 502 `upstream_error`                  | kept             |
 * | not_found_error (404)          | 502 `upstream_not_found` (model config) | kept             |
 * | authentication_error (401)     | 502 `upstream_auth_failed`              | replaced         |
 * | permission_error (403)         | 502 `upstream_permission_denied`        | replaced         |
 * | billing_error (402)            | 502 `upstream_billing_error`            | replaced         |
 *
 * Key, permission and billing problems are the operator's, not the caller's: the caller gets a 502
 * that says so, never Anthropic's text about our key. 529 is not an HTTP status clients know;
 * 503 is what OpenAI SDKs retry. An `api_error` body (Anthropic's catch-all) or none at all leaves
 * a 408 or 5xx to its HTTP status, as at every provider (`serverFaultOf`): a 503 from a proxy in
 * front of Anthropic is overloaded, not an internal error. Kept messages lose the configured key and anything key-shaped (`sanitizeMessage`).
 */
import type { ProviderConfig } from '../../config/schema.ts'
import type { GatewayError } from '../../util/errors.ts'
import {
  commonErrorRules,
  type ErrorNames,
  type ErrorRule,
  errorOf,
  parseErrorBody,
} from '../shared/error-rules.ts'
import type { AnthropicErrorBody } from './anthropic-types.ts'

const operatorProblem =
  (what: string) =>
  (_detail: string, provider: ProviderConfig): string =>
    `Anthropic ${what} for provider '${provider.prefix}'. This is a gateway configuration problem: ask the operator to check that provider's api_key and account.`

const COMMON = commonErrorRules('Anthropic')

const RULES: Record<string, ErrorRule> = {
  invalid_request_error: COMMON.invalidRequest,
  request_too_large: {
    status: 413,
    code: 'upstream_request_too_large',
    message: (d) => `The request is too large for Anthropic: ${d} Send fewer or smaller messages or images.`,
  },
  rate_limit_error: COMMON.rateLimited,
  overloaded_error: COMMON.overloaded,
  timeout_error: COMMON.timeout,
  api_error: COMMON.internal,
  not_found_error: COMMON.notFound,
  authentication_error: {
    status: 502,
    code: 'upstream_auth_failed',
    message: operatorProblem('rejected the gateway’s API key'),
  },
  permission_error: {
    status: 502,
    code: 'upstream_permission_denied',
    message: operatorProblem('denied the gateway’s API key access'),
  },
  billing_error: {
    status: 502,
    code: 'upstream_billing_error',
    message: operatorProblem('refused the request for billing reasons'),
  },
}

/**
 * The `error.type` Anthropic documents for each 4xx status, for bodies that lack one (and for the
 * Messages surface's own refusals, surfaces/messages/errors.ts).
 */
export const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
}

const NAMES: ErrorNames = {
  rules: RULES,
  catchAll: 'api_error',
  // 408 and 5xx mean at Anthropic what they mean at every provider (`serverFaultOf`).
  byFault: { timeout: 'timeout_error', overloaded: 'overloaded_error', internal: 'api_error' },
  byStatus: TYPE_BY_STATUS,
  otherwise: 'invalid_request_error',
}

/**
 * A non-2xx response from `/v1/messages` → `GatewayError`. The body's `error.type` decides,
 * unless it is the catch-all `api_error` (or missing, or unknown): then the HTTP status does, so a
 * 503 is overloaded and a 504 a timeout whatever type came with it.
 *
 * @example
 * mapAnthropicHttpError(529, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', provider)
 * // GatewayError 503 upstream_overloaded
 */
export function mapAnthropicHttpError(
  status: number,
  bodyText: string,
  provider: ProviderConfig,
): GatewayError {
  const body = parseErrorBody<AnthropicErrorBody>(bodyText)
  const detail = body?.error?.message ?? `HTTP ${status}.`
  return errorOf(NAMES, body?.error?.type, detail, provider, status)
}

/** The data of a stream `error` event → `GatewayError`; unknown types count as `api_error`. */
export function mapAnthropicStreamError(body: AnthropicErrorBody, provider: ProviderConfig): GatewayError {
  const detail = body.error?.message ?? 'error event without a message.'
  return errorOf(NAMES, body.error?.type, detail, provider)
}
