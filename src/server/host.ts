/**
 * @module
 * Which Host a request may name, checked on every route before routing.
 *
 * Not a host name (400 `invalid_host`): Bun builds `request.url` from the Host header. When the
 * Host is not a valid authority (`a/b`, empty, `a?`, `a@b`, absent on HTTP/1.0) `request.url` is
 * the bare path, and anything that reads the URL text (Elysia's own path finder included) sees a
 * different path than the request line. Such a request is refused instead of being half understood.
 *
 * Not a name this gateway answers to (403 `host_not_allowed`), against DNS rebinding: a page at
 * http://evil.example:8080 whose name is made to resolve to 127.0.0.1 is same-origin with a gateway
 * listening there, and reads what it answers. Its requests say `Host: evil.example:8080`. Such a
 * page needs a name in public DNS; the gateway always answers a Host that cannot be one (an IP
 * literal, a single label, a special-use name: `localhost`, `*.localhost`, `.internal`, `.test`,
 * …), and a public name only when `server.allowed_hosts` lists it. With no list, a gateway
 * listening on loopback answers no public name, and one listening elsewhere (reached by whatever
 * names its operator gave it) answers any. The port is not checked: an ssh tunnel or a container's
 * port mapping reaches the gateway on another port, and a rebinding page cannot change its name.
 *
 * @example
 * const checkHost = hostCheck(config.server)
 * new Elysia().onRequest(({ request }) => checkHost(request))
 */
import { GatewayError } from '../util/errors.ts'
import { clip } from '../util/text.ts'

/** reg-name (letters, digits, `-._`), IPv4, or a bracketed IPv6 literal; optional port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9_][A-Za-z0-9_.-]{0,252})(?::[0-9]{1,5})?$/

/**
 * A request that reached the server through a socket always carries a Host here (HTTP/1.1
 * requires one; an HTTP/1.0 request without one gets a relative `request.url`). A `Request`
 * built in code (`app.handle`) has an absolute URL and no Host header; it passes.
 */
function hasValidHost(request: Request, host: string | null): boolean {
  if (request.url.charCodeAt(0) === 47 /* '/' */) return false
  return host === null || HOST.test(host)
}

/** `host`: the request's Host header (`hostCheck` reads it once for both checks). */
function rejectInvalidHost(request: Request, host: string | null): void {
  if (!hasValidHost(request, host)) {
    throw new GatewayError(
      400,
      'invalid_host',
      'The Host header is missing or is not a valid host name; send "Host: <gateway host>[:port]".',
    )
  }
}

/** Names no public DNS holds (RFC 6761, 6762, 8375; ICANN's `.internal`): no page elsewhere has one. */
const NOT_PUBLIC = /(?:^|\.)(?:localhost|test|example|invalid|local|internal|home\.arpa)$/

/** A listen address that only this machine reaches. */
const LOOPBACK = /^(?:127(?:\.[0-9]{1,3}){3}|::1|\[::1\]|localhost|[a-z0-9.-]+\.localhost)$/i

/** The name in a (valid) Host header: lower case, no port, no trailing dot. */
function nameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1)
  const colon = host.indexOf(':')
  const name = (colon === -1 ? host : host.slice(0, colon)).toLowerCase()
  return name.endsWith('.') ? name.slice(0, -1) : name
}

/**
 * Whether a name could be an attacker's: one in public DNS. A browser writes every all-numeric
 * host (`127.1`, `2130706433`) as an IPv4 address; a single label is resolved on this machine or
 * its network, never by a registrar's DNS.
 */
function publicName(name: string): boolean {
  if (name.startsWith('[') || /^[0-9.]+$/.test(name) || !name.includes('.')) return false
  return !NOT_PUBLIC.test(name)
}

/**
 * The check every request passes (`rejectInvalidHost`, then the allowed names), for the listen
 * address and `server.allowed_hosts` of `server`.
 */
export function hostCheck(server: { host: string; allowedHosts: readonly string[] | null }) {
  const listed = server.allowedHosts ?? (LOOPBACK.test(server.host) ? [] : ['*'])
  const any = listed.includes('*')
  const exact = new Set(listed.filter((h) => !h.startsWith('*.')))
  const under = listed.filter((h) => h.startsWith('*.')).map((h) => h.slice(1))
  return (request: Request): void => {
    // The header read once, for both checks.
    const host = request.headers.get('host')
    rejectInvalidHost(request, host)
    if (any || host === null) return
    const name = nameOf(host)
    if (!publicName(name) || exact.has(name) || under.some((u) => name.endsWith(u))) return
    throw new GatewayError(
      403,
      'host_not_allowed',
      `This gateway does not answer to the name ${clip(name)} (it listens on ${server.host}; a page under a name it does not know could be a DNS-rebinding attack). If you reach it by that name, add it to server.allowed_hosts.`,
      { type: 'permission_error' },
    )
  }
}
