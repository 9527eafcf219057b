/**
 * @module
 * Refuses requests whose Host is not a host name (400 `invalid_host`), on every route.
 *
 * Why: Bun builds `request.url` from the Host header. When the Host is not a valid authority
 * (`a/b`, empty, `a?`, `a@b`, absent on HTTP/1.0) `request.url` is the bare path, and anything
 * that reads the URL text (Elysia's own path finder included) sees a different path than the
 * request line. Such a request is refused before routing instead of being half understood.
 *
 * @example
 * new Elysia().onRequest(({ request }) => rejectInvalidHost(request))
 */
import { GatewayError } from '../util/errors.ts'

/** reg-name (letters, digits, `-._`), IPv4, or a bracketed IPv6 literal; optional port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9_][A-Za-z0-9_.-]{0,252})(?::[0-9]{1,5})?$/

/**
 * A request that reached the server through a socket always carries a Host here (HTTP/1.1
 * requires one; an HTTP/1.0 request without one gets a relative `request.url`). A `Request`
 * built in code (`app.handle`) has an absolute URL and no Host header; it passes.
 */
export function hasValidHost(request: Request): boolean {
  if (request.url.charCodeAt(0) === 47 /* '/' */) return false
  const host = request.headers.get('host')
  return host === null || HOST.test(host)
}

export function rejectInvalidHost(request: Request): void {
  if (!hasValidHost(request)) {
    throw new GatewayError(
      400,
      'invalid_host',
      'The Host header is missing or is not a valid host name; send "Host: <gateway host>[:port]".',
    )
  }
}
