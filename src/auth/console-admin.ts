/**
 * @module
 * The console's half of the admin guard: a request with no Authorization header but the
 * console's session cookie is the admin if the session is live, and may change something only
 * from this origin. Anything else falls through to the admin-token check.
 */
import type { Store } from '../store/index.ts'
import type { Clock } from '../util/clock.ts'
import { GatewayError } from '../util/errors.ts'
import { adminCredential } from './session-binding.ts'
import { ADMIN_COOKIE, ADMIN_SESSION, assertSameOriginWrite, findSession, readCookie } from './sessions.ts'

/** An admin session's credential: the admin token this process runs with. */
export const adminBound =
  (deps: { config: { admin: { token: string | null } } }) =>
  (s: { kind: string }): string | null =>
    s.kind === 'admin' && deps.config.admin.token !== null ? adminCredential(deps.config.admin.token) : null

/** true: a signed-in console (checked); false: no console cookie, check the token instead. */
export async function consoleAdmin(
  deps: { store: Store; clock: Clock; config: { admin: { token: string | null } } },
  request: Request,
): Promise<boolean> {
  if (request.headers.has('authorization') || readCookie(request, ADMIN_COOKIE) === null) return false
  const s = await findSession(deps.store, ADMIN_SESSION, request, deps.clock.now(), adminBound(deps))
  if (s?.kind !== 'admin') {
    throw new GatewayError(401, 'session_expired', 'The console session has ended; sign in again.', {
      type: 'authentication_error',
    })
  }
  assertSameOriginWrite(request)
  return true
}
