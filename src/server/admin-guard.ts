/**
 * @module
 * The admin guard: a plugin that every admin route group `.use()`s before declaring its routes
 * (the admin API, the console's API). Authorization belongs to the route group, so it holds
 * however the URL text looks.
 *
 * It runs before Elysia reads or validates anything a caller sent: in `parse` for routes with a
 * body (Elysia parses before `transform`), and in `transform` for every route (before query,
 * params and body validation). An unauthenticated caller therefore gets 401 / 403 / 404 / 429
 * whatever its body, and never makes the gateway parse one. An authorized caller's path
 * parameters are checked there too: one that is no valid percent-encoding is a 400
 * (`./route-validation.ts`), for every route of the group. An authorized caller's body is then
 * read in the same hook, bounded (`./json-body.ts`: JSON only, at most `ADMIN_BODY_MAX` bytes), so
 * Elysia's own parser, which reads a body of any size, never runs on an admin route.
 *
 * Answers: 404 when no admin token is configured (the admin API is off); for a credential that is
 * not the admin token, 429 while the caller's address is throttled (`deps.authThrottle`, shared with `/metrics`: after
 * five refused credentials a minute, the address's wrong ones are refused so until the minute
 * ends; the right token always passes); 403 for a user key; 401 for anything else that is not the admin token or a live console session (its cookie,
 * `../auth/console-admin.ts`); 403 for a console-session change that does not come from the
 * console's own origin. A missing Authorization header is refused but not counted: it guesses
 * nothing.
 *
 * Every request to a guarded route leaves one audit line (`../util/audit.ts`) when answered:
 * who (`actor`), method and route (`action`), what it was done to (`target`: the account or key,
 * as the command line names it — the route's `:name` or `:id`, or what a handler says through
 * `auditChange`), what it set (`change`, from the handler: a plan and its days, a new key's id),
 * the path, outcome, status, request id and client address; never the token or a key.
 *
 * @example
 * new Elysia({ prefix: '/admin/v1' })
 *   .use(adminGuard(deps)) // first: routes declared before it are not guarded
 *   .get('/accounts', ({ query }) => svc.accountsPage(query))
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Server } from 'bun'
import { Elysia } from 'elysia'
import { KEY_PREFIX } from '../accounts/keys.ts'
import { consoleAdmin } from '../auth/console-admin.ts'
import { authThrottled } from '../auth/throttle.ts'
import { type AuditActor, type AuditEvent, audit } from '../util/audit.ts'
import { GatewayError } from '../util/errors.ts'
import { bearerToken } from '../util/key-shape.ts'
import { PATH_SHOWN } from '../util/log.ts'
import { clip } from '../util/text.ts'
import type { Deps } from './deps.ts'
import { ADMIN_BODY_MAX, smallJsonBody } from './json-body.ts'
import { assertPathParams } from './route-validation.ts'

const digest = (s: string) => createHash('sha256').update(s).digest()

const invalidToken = (message: string) =>
  new GatewayError(401, 'invalid_admin_token', message, { type: 'authentication_error' })

/**
 * What a caller offers as the admin token: an Authorization header (the admin API), or the token
 * itself (the console's sign-in form).
 */
export type AdminCredential = { header: string | null } | { token: string }

/** Checks a credential against the admin token; throws the refusal. */
export function adminTokenCheck(token: string | null): (credential: AdminCredential) => void {
  // Compared as digests: equal length whatever is sent, so the comparison time says nothing.
  const expected = token === null ? null : digest(token)
  return (credential) => {
    if (expected === null) {
      throw new GatewayError(
        404,
        'not_found',
        'The admin API is off; set admin.token in the config and send the serve process SIGHUP (kill -HUP PID) to turn it on.',
      )
    }
    const given = 'token' in credential ? formToken(credential.token) : headerToken(credential.header)
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

/** Whether `header` is `Bearer <token>`, compared as digests (the time says nothing). */
function bearerIs(header: string | null, token: string): boolean {
  const given = bearerToken(header)
  return given !== null && timingSafeEqual(digest(given), digest(token))
}

function headerToken(header: string | null): string {
  if (!header) throw invalidToken('Missing admin token; send "Authorization: Bearer <admin.token>".')
  const given = bearerToken(header)
  if (given === null)
    throw invalidToken('Malformed Authorization header; send "Authorization: Bearer <admin.token>".')
  return given
}

/** The token pasted into the sign-in form; spaces around it are the paste's, not the token's. */
function formToken(token: string): string {
  const given = token.trim()
  if (!given) throw invalidToken('Missing admin token; enter admin.token from the config.')
  if (/\s/.test(given)) {
    throw invalidToken('Malformed admin token: it holds no spaces or line breaks; paste it whole.')
  }
  return given
}

/** Whether a credential offers anything: a missing one guesses nothing and is not counted. */
const offered = (c: AdminCredential) => ('token' in c ? c.token.trim() !== '' : !!c.header)

const throttled = authThrottled('admin_auth_throttled', 'admin authentications')

/** The error code a request ended with, or `ok`. */
function outcomeOf(error: unknown, status: number): string {
  const e = (error as Error | undefined)?.cause instanceof GatewayError ? (error as Error).cause : error
  if (e instanceof GatewayError) return e.code
  if (e) return String((e as { code?: unknown }).code ?? 'error').toLowerCase()
  return status < 400 ? 'ok' : `http_${status}`
}

type GuardDeps = Pick<Deps, 'config' | 'log' | 'authThrottle' | 'store' | 'clock' | 'traffic'>

/** What a change did, for its audit line: said by the handler that made it. */
export interface AuditChange {
  /** The account or key changed, when the route's `:name` / `:id` does not say it. */
  target?: string
  /** The fields set (`plan`, `days`, a new key's `key` id): never a secret. */
  change?: Record<string, unknown>
}

/** The longest name an audit line repeats from a request: no line grows with it. */
const SHOWN = 200

/** Strings clipped, nothing else touched: the values of a change are short by their schemas. */
const clipped = (change: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(change)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, typeof v === 'string' ? clip(v, SHOWN) : v]),
  )

/**
 * The admin token check with a per-address throttle on wrong credentials, for the guard and the
 * console's sign-in alike. The credential is checked first: the right token always passes, so
 * wrong ones sent from an address (or one shared with an attacker: a NAT, a proxy) can never lock
 * the operator out (DESIGN §16). A wrong credential counts toward its address's throttle and,
 * once the address is throttled, is answered 429 with `retry-after` instead of 401: guessing is
 * slowed to a few tries a minute per address (a 32-character token makes those worthless).
 */
export function adminCredentialCheck(deps: Pick<Deps, 'config' | 'authThrottle'>) {
  const check = adminTokenCheck(deps.config.admin.token)
  return (client: string, credential: AdminCredential): void =>
    deps.authThrottle.guard(
      client,
      () => check(credential),
      throttled,
      // The admin API off (404) guesses nothing either.
      (err) => offered(credential) && err instanceof GatewayError && err.status !== 404,
    )
}

/**
 * `serveToken`: a second credential this group takes beside the admin token (the serve file's, for
 * the reload route: cli/serve-file.ts), read at each request; it passes even with the admin API off.
 */
export function adminGuard(deps: GuardDeps, opts: { serveToken?: () => string | null } = {}) {
  const credential = adminCredentialCheck(deps)
  const readBody = smallJsonBody(ADMIN_BODY_MAX, deps.config.server.bodyTimeoutMs)
  /**
   * Per request: the caller's address (read while the socket is attached: after the response
   * Bun no longer knows it) and whether the token passed, so a body route's second hook does not
   * check twice and the audit line names the actor.
   */
  const seen = new WeakMap<
    Request,
    { client: string; passed: boolean; actor: AuditActor; change?: AuditChange }
  >()

  const authorize = async (request: Request, server: Server<unknown> | null) => {
    let state = seen.get(request)
    if (state?.passed) return
    if (!state) {
      state = {
        client: server?.requestIP(request)?.address ?? 'unknown',
        passed: false,
        actor: 'admin_token',
      }
      seen.set(request, state)
    }
    const serveToken = opts.serveToken?.()
    if (serveToken && bearerIs(request.headers.get('authorization'), serveToken)) {
      state.passed = true
      state.actor = 'serve_file'
      return
    }
    if (deps.config.admin.token !== null && (await consoleAdmin(deps, request))) {
      state.passed = true
      state.actor = 'console_session'
      return
    }
    credential(state.client, { header: request.headers.get('authorization') })
    state.passed = true
  }

  // No plugin name: a named plugin is applied once per app, and each group needs its own hooks.
  return new Elysia()
    .onParse({ as: 'scoped' }, async ({ request, server }) => {
      await authorize(request, server)
      return readBody(request)
    })
    .onTransform({ as: 'scoped' }, async ({ request, server, params }) => {
      await authorize(request, server)
      assertPathParams(params)
    })
    .resolve({ as: 'scoped' }, ({ request }) => ({
      /** For handlers (it resolves after validation): what they changed, for the audit line. */
      auditChange(c: AuditChange): void {
        const state = seen.get(request)
        if (!state) return
        const change = { ...state.change?.change, ...c.change }
        state.change = { target: c.target ?? state.change?.target, change }
      },
    }))
    .onAfterResponse({ as: 'scoped' }, (ctx) => {
      const { request, server, route, path, set } = ctx
      const error = (ctx as { error?: unknown }).error // present after a refusal; untyped here
      const params = (ctx as { params?: Record<string, string | undefined> }).params
      const status = Number(set.status ?? 200)
      const state = seen.get(request)
      const ex = deps.traffic.of(request)
      const said = state?.passed ? state.change : undefined
      const fields = said?.change ? clipped(said.change) : {}
      const change = Object.keys(fields).length ? fields : undefined
      const line: AuditEvent & { path: string } = {
        actor: state?.passed ? state.actor : 'unauthenticated',
        action: `${request.method} ${route}`,
        target: clip(said?.target ?? params?.name ?? params?.id ?? path, SHOWN),
        ...(change ? { change } : {}),
        path: clip(path, PATH_SHOWN),
        outcome: outcomeOf(error, status),
        status,
        // The gateway's own id, as on the access line; a client's x-request-id beside it.
        request_id: ex?.id ?? String(set.headers['x-request-id'] ?? ''),
        ...(ex?.clientId ? { client_request_id: ex.clientId } : {}),
        client: state?.client ?? server?.requestIP(request)?.address ?? 'unknown',
      }
      audit(deps.log, line)
    })
}
