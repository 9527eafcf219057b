/**
 * @module
 * The admin guard: a plugin that every admin route group `.use()`s before declaring its routes.
 * Authorization belongs to the route group, so it holds however the URL text looks.
 *
 * It runs before Elysia reads or validates anything a caller sent: in `parse` for routes with a
 * body (Elysia parses before `transform`), and in `transform` for every route (before query,
 * params and body validation). An unauthenticated caller therefore gets 401 / 403 / 404
 * whatever its body, and never makes the gateway parse one.
 *
 * Answers: 404 when no admin token is configured (the admin API is off); 403 for a user key;
 * 401 for anything else that is not the admin token.
 *
 * @example
 * new Elysia({ prefix: '/admin/v1' })
 *   .use(adminGuard(deps)) // first: routes declared before it are not guarded
 *   .get('/accounts', () => deps.accounts.listAccounts())
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import { KEY_PREFIX } from '../accounts/keys.ts'
import { GatewayError } from '../util/errors.ts'
import type { Deps } from './deps.ts'

const digest = (s: string) => createHash('sha256').update(s).digest()

const invalidToken = (message: string) =>
  new GatewayError(401, 'invalid_admin_token', message, { type: 'authentication_error' })

/** Checks an Authorization header against the admin token; throws the refusal. */
export function adminTokenCheck(token: string | null): (header: string | null) => void {
  // Compared as digests: equal length whatever is sent, so the comparison time says nothing.
  const expected = token === null ? null : digest(token)
  return (header) => {
    if (expected === null) {
      throw new GatewayError(
        404,
        'not_found',
        'The admin API is off; set admin.token in the config to turn it on.',
      )
    }
    if (!header) throw invalidToken('Missing admin token; send "Authorization: Bearer <admin.token>".')
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header)
    if (!m) throw invalidToken('Malformed Authorization header; send "Authorization: Bearer <admin.token>".')
    const given = m[1]!
    if (given.startsWith(KEY_PREFIX)) {
      throw new GatewayError(
        403,
        'admin_only',
        'User API keys cannot use the admin API; use the admin token.',
      )
    }
    if (!timingSafeEqual(digest(given), expected)) throw invalidToken('Incorrect admin token.')
  }
}

export function adminGuard(deps: Pick<Deps, 'config'>) {
  const check = adminTokenCheck(deps.config.admin.token)
  // No plugin name: a named plugin is applied once per app, and each group needs its own hooks.
  return new Elysia()
    .onParse({ as: 'scoped' }, ({ request }) => {
      check(request.headers.get('authorization'))
      // undefined: Elysia's own parser then reads the body.
    })
    .onTransform({ as: 'scoped' }, ({ request }) => check(request.headers.get('authorization')))
}
