/**
 * @module
 * Small JSON bodies: the admin API's and the console's sign-in and sign-out. Read by the route
 * group's parse hook, before Elysia would read anything, so a body costs no more than its bound:
 *
 * - a `Content-Type` that is not JSON → 415 (none is read as JSON, like the model surfaces);
 * - more than `limit` bytes, declared or counted as a chunked body arrives → 413, the rest unread;
 * - a body still arriving after `server.body_timeout_s` → 408;
 * - invalid JSON → 400 naming where (the route's schema then says what it takes).
 *
 * No body at all reads as `{}`: a route that takes none accepts a bare POST, and a route's schema
 * names what is missing. The server sets no size limit of its own (`app/serve.ts`: Bun's would
 * answer with a bare 413), so every route that reads a body bounds it: the model surfaces in the
 * pipeline (`server.body_limit_bytes`), every other route here.
 *
 * @example
 * const read = smallJsonBody(ADMIN_BODY_MAX, deps.config.server.bodyTimeoutMs)
 * new Elysia().onParse(({ request }) => read(request)) // a defined value: Elysia's parser never runs
 */
import { t } from 'elysia'
import { parseJsonBody } from '../json/parse-json-body.ts'
import { checkJsonContentType, readBodyText } from '../pipeline/body.ts'
import { GatewayError } from '../util/errors.ts'

/** The admin API's bound: its largest body, a key with limits naming every model, is a few KB. */
export const ADMIN_BODY_MAX = 64 * 1024

/** The console's sign-in bound: `{"token": …}` with a token of at most 4,096 characters. */
export const SIGN_IN_BODY_MAX = 8 * 1024

/** The body schema of a route that takes none: a field sent anyway is a 400 naming it. */
export const NoBody = t.Object({}, { additionalProperties: false })

export function smallJsonBody(limit: number, timeoutMs: number): (request: Request) => Promise<unknown> {
  return async (request) => {
    if (request.body === null || request.headers.get('content-length') === '0') return {}
    checkJsonContentType(request)
    const text = await readBodyText(request, limit, timeoutMs).catch((err) => {
      // The pipeline's 413 advises smaller images; these routes take none.
      if (err instanceof GatewayError && err.status === 413) throw tooLarge(limit)
      throw err
    })
    if (text.trim() === '') return {}
    // Any JSON: the route's schema says what it takes, naming the field.
    return parseJsonBody(text, '{"field": "value"}', undefined, true)
  }
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError(
    413,
    'request_too_large',
    `Request body is larger than this route's ${limit}-byte limit; its fields are short, so send only them.`,
  )
}
