/**
 * @module
 * The one HTTP error class. Everything the gateway refuses is a `GatewayError`, rendered as
 * OpenAI's error body: `{"error": {"message", "type", "param", "code"}}`. A message never holds
 * an API key: one a caller pasted where something else belongs (a model id, an account name) is
 * cut to its display prefix, here where every error is made.
 */
import { maskKeys } from './key-shape.ts'

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'api_error'
  | 'upstream_error'
  | 'timeout_error'

const TYPE_BY_STATUS: Record<number, ErrorType> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
  502: 'upstream_error',
  504: 'timeout_error',
}

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null }
}

export class GatewayError extends Error {
  readonly status: number
  readonly code: string
  readonly param: string | null
  readonly type: string
  /** Extra response headers, e.g. `retry-after`. */
  readonly headers: Record<string, string> | undefined
  /** For the server log only, never sent: e.g. the network error naming the upstream's URL. */
  readonly detail: string | undefined

  constructor(
    status: number,
    code: string,
    message: string,
    opts: { param?: string | null; type?: string; headers?: Record<string, string>; detail?: string } = {},
  ) {
    super(maskKeys(message))
    this.name = 'GatewayError'
    this.status = status
    this.code = code
    this.param = opts.param ?? null
    this.type = opts.type ?? TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
    this.headers = opts.headers
    this.detail = opts.detail
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } }
  }
}

/** 400 `invalid_value` naming `param`: "`param`: `message`" (a query or body value out of its range). */
export const invalidValue = (param: string, message: string): GatewayError =>
  new GatewayError(400, 'invalid_value', `${param}: ${message}`, { param })

/** `messages[2].content` style path from a JSON pointer like `/messages/2/content`. */
export function pointerToParam(pointer: string): string | null {
  if (!pointer || pointer === '/') return null
  let out = ''
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    out += /^\d+$/.test(part) ? `[${part}]` : out ? `.${part}` : part
  }
  return out || null
}

/**
 * The codes of the gateway's own failures: its code threw (500 `internal_error`, failure kind
 * `internal`), its database or shared limiter did not answer (503). Never a provider's error,
 * whichever provider the request was on: counted apart from the providers' (DESIGN §15). The
 * errors carrying them (store/errors.ts, limits/unavailable.ts, pipeline/errors.ts) take their
 * codes from here, so the list and the errors cannot drift.
 */
export const GATEWAY_FAILURE = {
  internal: 'internal_error',
  storeBusy: 'store_busy',
  storeUnavailable: 'store_unavailable',
  limiterUnavailable: 'limiter_unavailable',
} as const

const GATEWAY_FAILURES: ReadonlySet<string> = new Set(Object.values(GATEWAY_FAILURE))

export const gatewaysOwnFailure = (code: string): boolean => GATEWAY_FAILURES.has(code)

/** A request refused or cut because the gateway is shutting down: retry (another instance may answer). */
export function shuttingDownError(): GatewayError {
  return new GatewayError(
    503,
    'shutting_down',
    'The gateway is shutting down; retry the request in a moment.',
    { type: 'api_error', headers: { 'retry-after': '1' } },
  )
}

/** The error as a response in OpenAI's shape, with `headers` (the response's so far) and the error's own. */
export function errorResponse(err: GatewayError, headers: Record<string, string | number> = {}): Response {
  const h = errorHeaders(err, headers, 'application/json')
  return new Response(JSON.stringify(err.toBody() satisfies ErrorBody), { status: err.status, headers: h })
}

/** An error response's headers: `headers` (the response's so far), its content type, the error's own. */
export function errorHeaders(
  err: GatewayError,
  headers: Record<string, string | number>,
  contentType: string,
): Headers {
  const h = new Headers()
  for (const [k, v] of Object.entries(headers)) h.set(k, String(v))
  h.set('content-type', contentType)
  setErrorHeaders(h, err)
  return h
}

/** The longest wait a client's automatic retry is left to sleep through (the OpenAI SDK's cap). */
const MAX_CLIENT_RETRY_WAIT_MS = 60_000

/**
 * The error's own headers, and `x-should-retry: false` when its `retry-after` is longer than a
 * client should sleep through: the OpenAI and Anthropic SDKs obey that header before anything
 * else, and the Anthropic SDK otherwise sleeps any `retry-after` out (a day's window: a day).
 */
export function setErrorHeaders(h: Headers, err: GatewayError): void {
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) h.set(k, v)
  const ms = Number(h.get('retry-after-ms') ?? Number(h.get('retry-after')) * 1000)
  if (ms > MAX_CLIENT_RETRY_WAIT_MS) h.set('x-should-retry', 'false')
}
