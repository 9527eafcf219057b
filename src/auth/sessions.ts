/**
 * @module
 * Console sessions. Signing in exchanges the admin token (or, at `/console/me`, an API key) for a
 * random session token in an HttpOnly, SameSite=Strict cookie; the database keeps only its
 * SHA-256, so signing out (or the expiry) ends it on every worker and replica. The page never
 * holds the admin token.
 *
 * CSRF: a request authenticated by the cookie may change something only when it says where it
 * comes from and that is this origin (`Origin` equal to the request's own scheme and host, or
 * `Sec-Fetch-Site: same-origin`). SameSite=Strict already keeps the cookie off cross-site
 * requests; the origin check also covers sibling subdomains and browsers without SameSite.
 */
import { createHash } from 'node:crypto'
import type { ConsoleSession, Store } from '../store/index.ts'
import { GatewayError } from '../util/errors.ts'
import { bindingOf, boundTo } from './session-binding.ts'

export const ADMIN_COOKIE = 'sy_console'
export const KEY_COOKIE = 'sy_me'
/** The key holder's cookie goes only to its own pages. */
export const KEY_COOKIE_PATH = '/console/me'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

const hash = (token: string) => createHash('sha256').update(token).digest('hex')

export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get('cookie')
  if (!header) return null
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const v = part.slice(eq + 1).trim()
      return /^[A-Za-z0-9_-]{20,100}$/.test(v) ? v : null
    }
  }
  return null
}

/** Whether a browser would call this request same-origin. */
export function sameOrigin(request: Request): boolean {
  const origin = request.headers.get('origin')
  if (origin !== null) {
    const host = request.headers.get('host')
    if (!host) return false
    try {
      const o = new URL(origin)
      return o.host === host && (o.protocol === 'http:' || o.protocol === 'https:')
    } catch {
      return false
    }
  }
  return request.headers.get('sec-fetch-site') === 'same-origin'
}

/** Throws unless the request is a read, or comes from this origin. */
export function assertSameOriginWrite(request: Request): void {
  if (SAFE_METHODS.has(request.method) || sameOrigin(request)) return
  throw new GatewayError(
    403,
    'cross_origin_refused',
    'A console change must come from the console page itself (same origin); this request came from elsewhere.',
  )
}

export interface SessionCookie {
  name: string
  path: string
}

export const ADMIN_SESSION: SessionCookie = { name: ADMIN_COOKIE, path: '/' }
export const KEY_SESSION: SessionCookie = { name: KEY_COOKIE, path: KEY_COOKIE_PATH }

function cookie(c: SessionCookie, value: string, maxAgeS: number, secure: boolean): string {
  return `${c.name}=${value}; Path=${c.path}; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`
}

const isHttps = (request: Request) =>
  request.url.startsWith('https:') || request.headers.get('x-forwarded-proto') === 'https'

/** Starts a session bound to `credential` (`./session-binding.ts`); returns the Set-Cookie header value. */
export async function startSession(
  store: Store,
  c: SessionCookie,
  request: Request,
  s: Omit<ConsoleSession, 'expiresAt' | 'binding'>,
  now: number,
  ttlMs: number,
  credential: string,
): Promise<{ setCookie: string; expiresAt: number }> {
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  const expiresAt = now + ttlMs
  const h = hash(token)
  await store.createSession(h, { ...s, expiresAt, binding: bindingOf(h, credential) }, now)
  return { setCookie: cookie(c, token, Math.floor(ttlMs / 1000), isHttps(request)), expiresAt }
}

/**
 * The live session the request carries, if it is still bound to the credential it was opened
 * with (`credentialOf` answers the credential as it is now, null when there is none); a session
 * that is not is deleted, so it cannot come back.
 */
export async function findSession(
  store: Store,
  c: SessionCookie,
  request: Request,
  now: number,
  credentialOf: (s: ConsoleSession) => string | null | Promise<string | null>,
): Promise<ConsoleSession | null> {
  const token = readCookie(request, c.name)
  if (!token) return null
  const h = hash(token)
  const s = await store.getSession(h, now)
  if (!s) return null
  if (boundTo(s.binding, h, await credentialOf(s))) return s
  await store.deleteSession(h)
  return null
}

/** Ends the session the request carries (if any); returns the Set-Cookie that clears it. */
export async function endSession(store: Store, c: SessionCookie, request: Request): Promise<string> {
  const token = readCookie(request, c.name)
  if (token) await store.deleteSession(hash(token))
  return cookie(c, '', 0, isHttps(request))
}
