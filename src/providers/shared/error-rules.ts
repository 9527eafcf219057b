/**
 * @module
 * The table-driven error mapping the native-protocol adapters share: a provider's error type
 * picks an `ErrorRule` (Switchyard status, code, message); the provider's own text goes into the
 * message only after redaction.
 */
import type { ProviderConfig } from '../../config/schema.ts'
import { GatewayError } from '../../util/errors.ts'
import { type ServerFault, sanitizeMessage, serverFaultOf } from '../http.ts'

export interface ErrorRule {
  status: number
  code: string
  /** What the caller reads; `detail` is the provider's redacted message (operator rules ignore it). */
  message: (detail: string, provider: ProviderConfig) => string
}

/**
 * The rules whose meaning is the same at every provider, worded with its product name: the caller
 * can fix or retry these, so the provider's (redacted) text is kept.
 *
 * @example
 * const COMMON = commonErrorRules('Gemini')
 * const RULES = { RESOURCE_EXHAUSTED: COMMON.rateLimited }
 */
export function commonErrorRules(name: string) {
  return {
    invalidRequest: {
      status: 400,
      code: 'upstream_invalid_request',
      message: (d) => `${name} rejected the request: ${d}`,
    },
    rateLimited: {
      status: 429,
      code: 'upstream_rate_limited',
      message: (d) => `${name} is rate limiting this gateway: ${d} Retry after a short wait.`,
    },
    // 503, not a provider's own 529: it is the status OpenAI SDKs retry.
    overloaded: {
      status: 503,
      code: 'upstream_overloaded',
      message: (d) => `${name} is temporarily overloaded: ${d} Retry after a short wait.`,
    },
    timeout: {
      status: 504,
      code: 'upstream_timeout',
      message: (d) => `${name} timed out: ${d} Retry, or ask for fewer tokens.`,
    },
    internal: {
      status: 502,
      code: 'upstream_error',
      message: (d) => `${name} failed with an internal error: ${d} Retry; if it persists, try another model.`,
    },
    // A model the upstream does not know is a config problem: 502, not the client's 404.
    notFound: {
      status: 502,
      code: 'upstream_not_found',
      message: (d, p) =>
        `${name} does not know what was asked for: ${d} Ask the operator to check the upstream model names of provider '${p.prefix}'.`,
    },
  } satisfies Record<string, ErrorRule>
}

/**
 * The provider's own error type for each `ServerFault` (an upstream status that means the same at
 * every provider), so a native adapter maps a 503, a 529 or a 408 as the OpenAI-style one does.
 */
export type ServerFaultTypes = Readonly<Record<ServerFault, string>>

/** A provider's error names: the rule of each, and the name it gives each HTTP status. */
export interface ErrorNames {
  rules: Readonly<Record<string, ErrorRule>>
  /** The catch-all (`api_error`, `INTERNAL`): a body naming it says nothing the status does not. */
  catchAll: string
  /** The name of each server fault (408, 5xx, 529: the same at every provider, `serverFaultOf`). */
  byFault: ServerFaultTypes
  /** The name the provider documents for each 4xx status. */
  byStatus: Readonly<Record<number, string>>
  /** A 4xx status with no name of its own. */
  otherwise: string
}

/**
 * A provider's error → `GatewayError`, by the rule of the name its body gives (`named`), unless
 * that is the catch-all or unknown; then by the HTTP status's (a server fault's, else the
 * status's own, else `otherwise`), or the catch-all's where there is no status (an error inside a
 * stream or a 200 body). `retryAfter`: headers a rate-limited answer (429) carries.
 *
 * @example
 * errorOf(NAMES, 'api_error', 'Overloaded', provider, 503) // GatewayError 503 upstream_overloaded
 */
export function errorOf(
  names: ErrorNames,
  named: string | undefined,
  detail: string,
  provider: ProviderConfig,
  httpStatus?: number,
  retryAfter?: Record<string, string>,
): GatewayError {
  const rule = ruleOf(names, named, httpStatus)
  return errorFromRule(rule, detail, provider, rule.status === 429 ? retryAfter : undefined)
}

function ruleOf(names: ErrorNames, named: string | undefined, httpStatus: number | undefined): ErrorRule {
  const known = named && named !== names.catchAll ? names.rules[named] : undefined
  if (known) return known
  const fault = httpStatus === undefined ? undefined : serverFaultOf(httpStatus)
  const name =
    httpStatus === undefined
      ? names.catchAll
      : fault
        ? names.byFault[fault]
        : (names.byStatus[httpStatus] ?? names.otherwise)
  return names.rules[name] ?? names.rules[names.catchAll]!
}

/**
 * @example
 * errorFromRule({ status: 429, code: 'upstream_rate_limited', message: (d) => `Slow down: ${d}` }, 'Quota exceeded', provider)
 * // GatewayError 429 upstream_rate_limited 'Slow down: Quota exceeded.'
 */
export function errorFromRule(
  rule: ErrorRule,
  detail: string,
  provider: ProviderConfig,
  headers?: Record<string, string>,
): GatewayError {
  const message = rule.message(cleanErrorDetail(detail, provider.api_key), provider)
  return new GatewayError(rule.status, rule.code, message, { headers })
}

/**
 * An error body as JSON, or null when it is not a JSON object. Gemini sometimes wraps its body in
 * an array (`[{error: …}]`): the first element is taken.
 */
export function parseErrorBody<T extends object>(text: string): T | null {
  try {
    const body = JSON.parse(text) as unknown
    const first = Array.isArray(body) ? body[0] : body
    return first && typeof first === 'object' ? (first as T) : null
  } catch {
    return null
  }
}

/** `x-api-key: …`, `api_key=…`: header-style secrets `sanitizeMessage` does not know. */
const LABELLED_SECRET = /\b((?:x-api-key|x-goog-api-key|api[_-]?key)\s*[:=]\s*)[^\s"',;]{8,}/gi

/** The provider's text without our key or anything key-shaped, ending as a sentence. */
export function cleanErrorDetail(detail: string, apiKey: string | undefined): string {
  const keyless = apiKey && apiKey.length >= 4 ? detail.split(apiKey).join('***') : detail
  return sanitizeMessage(keyless.replace(LABELLED_SECRET, '$1***')).replace(/([^.!?…])$/, '$1.')
}
