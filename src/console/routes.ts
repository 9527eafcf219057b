/**
 * @module
 * `GET /console` (the operator's console) and `GET /console/me` (a key holder's own usage): pages
 * bundled into the executable by Bun's HTML imports and served by `./static.ts` (with their
 * scripts and styles under `/console/assets/`), plus their session endpoints. Everything the
 * operator's console shows comes from the admin API, which accepts its session cookie; the key
 * holder's page reads one endpoint pinned to the signed-in key's account.
 */
import type { HTMLBundle } from 'bun'
import { Elysia, t } from 'elysia'
import { usageReport } from '../accounts/usage-report.ts'
import { authenticateToken, refusalError } from '../auth/authenticate.ts'
import { adminBound } from '../auth/console-admin.ts'
import { adminCredential, keyCredential } from '../auth/session-binding.ts'
import {
  ADMIN_SESSION,
  assertSameOriginWrite,
  endSession,
  findSession,
  KEY_SESSION,
  startSession,
} from '../auth/sessions.ts'
import { adminCredentialCheck } from '../server/admin-guard.ts'
import type { Deps } from '../server/deps.ts'
import { NoBody, SIGN_IN_BODY_MAX, smallJsonBody } from '../server/json-body.ts'
import { assertPathParams } from '../server/route-validation.ts'
import type { AccountRecord, KeyRecord } from '../store/index.ts'
import { requestLogPage, usageSeries } from '../usage/history.ts'
import { audit } from '../util/audit.ts'
import { DAY_MS, iso } from '../util/clock.ts'
import { GatewayError } from '../util/errors.ts'
import { clip } from '../util/text.ts'
import { ASSETS_PATH, consoleStatic } from './static.ts'
import adminPage from './ui/index.html'
import mePage from './ui/me.html'

const NO_STORE = { 'cache-control': 'no-store' }

/** A sign-out (DELETE of a session): the session ends and its cookie is cleared. */
function signOut(deps: Deps, cookie: typeof ADMIN_SESSION | typeof KEY_SESSION) {
  return async ({ request, set }: { request: Request; set: { headers: Record<string, unknown> } }) => {
    Object.assign(set.headers, NO_STORE, { 'set-cookie': await endSession(deps.store, cookie, request) })
    return { object: 'console.session', signed_in: false }
  }
}

function signedOut(): GatewayError {
  return new GatewayError(401, 'not_signed_in', 'Not signed in (or the session has ended); sign in again.', {
    type: 'authentication_error',
  })
}

/** The pages this gateway serves: the key holder's always, the operator's with an admin token. */
function pagesOf(deps: Deps): HTMLBundle[] {
  return deps.config.admin.token === null ? [mePage] : [adminPage, mePage]
}

/**
 * A key pasted into the sign-in form, or 401 saying it is malformed: spaces around it are the
 * paste's; one inside means it is not a key (it would otherwise be refused as unknown).
 */
function pastedKey(key: string): string {
  const given = key.trim()
  if (!/^\S+$/.test(given)) {
    throw new GatewayError(
      401,
      'invalid_api_key',
      'Malformed API key: a key (sk-sy-…) holds no spaces or line breaks; paste it whole.',
      { type: 'authentication_error' },
    )
  }
  return given
}

export function consoleRoutes(deps: Deps) {
  const token = deps.config.admin.token
  const ttl = deps.config.admin.sessionTtlMs
  const credential = adminCredentialCheck(deps)
  const readBody = smallJsonBody(SIGN_IN_BODY_MAX, deps.config.server.bodyTimeoutMs)
  // Every route here with a body signs in or out: a write, which must come from the console's own
  // page (a page elsewhere must not sign a browser in or out). Checked before the body is read,
  // which is then bounded: these routes need no authentication, so they are anyone's first door.
  const pages = consoleStatic()
  const served = pagesOf(deps)
  const app = new Elysia({ name: 'switchyard.console' })
    .onParse(({ request }) => {
      assertSameOriginWrite(request)
      return readBody(request)
    })
    .onTransform(({ params }) => assertPathParams(params))
    .get('/console/me', ({ request }) => pages.page(mePage, request))
    .get(`${ASSETS_PATH}/:name`, async ({ request, params }) => {
      const res = await pages.asset(served, params.name, request)
      if (res) return res
      throw new GatewayError(
        404,
        'not_found',
        `No console file ${clip(params.name)}; reload the console page.`,
      )
    })
  // With no admin token the operator's console is off (404), like the admin API.
  if (token !== null) {
    app
      .get('/console', ({ request }) => pages.page(adminPage, request))
      .post(
        '/console/session',
        async ({ request, body, set, server }) => {
          const client = server?.requestIP(request)?.address ?? 'unknown'
          // An audit line like the admin API's, `warn` when refused; never the token.
          const line = {
            action: 'POST /console/session',
            target: 'console',
            request_id: String(set.headers['x-request-id'] ?? ''),
            client,
          }
          try {
            // Throttled per address like the admin API: the sign-in form is no faster way to guess.
            credential(client, { token: body.token })
          } catch (err) {
            const e = err instanceof GatewayError ? err : null
            audit(deps.log, {
              ...line,
              actor: 'unauthenticated',
              outcome: e?.code ?? 'error',
              status: e?.status,
            })
            throw err
          }
          const s = await startSession(
            deps.store,
            ADMIN_SESSION,
            request,
            { kind: 'admin', keyId: null },
            deps.clock.now(),
            ttl,
            adminCredential(token),
          )
          audit(deps.log, { ...line, actor: 'admin_token', outcome: 'ok', status: 200 })
          Object.assign(set.headers, NO_STORE, { 'set-cookie': s.setCookie })
          return { object: 'console.session', signed_in: true, expires_at: iso(s.expiresAt) }
        },
        { body: t.Object({ token: t.String({ maxLength: 4096 }) }, { additionalProperties: false }) },
      )
      .get('/console/session', async ({ request, set }) => {
        Object.assign(set.headers, NO_STORE)
        const s = await findSession(deps.store, ADMIN_SESSION, request, deps.clock.now(), adminBound(deps))
        if (s?.kind !== 'admin') throw signedOut()
        return { object: 'console.session', signed_in: true, expires_at: iso(s.expiresAt) }
      })
      .delete('/console/session', signOut(deps, ADMIN_SESSION), { body: NoBody })
  }
  return app
    .post(
      '/console/me/session',
      async ({ request, body, set }) => {
        // A refused key may sign in to see why (suspended, plan expired), unless the operator
        // turned it or its account off: then it is refused as its requests are.
        const auth = await authenticateToken(deps, pastedKey(body.key), true)
        const key = await deps.store.getKey(auth.key.id)
        const account = key && (await deps.store.getAccount(key.accountId))
        const credential = keyCredential(key, account)
        if (credential === null) {
          // Revoked (or gone) since it was authenticated: as any unknown key.
          if (!key || !account || key.state === 'revoked') throw signedOut()
          const reason = key.state === 'disabled' ? 'key_disabled' : 'account_disabled'
          throw refusalError(reason, { key, account, plan: auth.plan }, deps.clock.now())
        }
        const s = await startSession(
          deps.store,
          KEY_SESSION,
          request,
          { kind: 'key', keyId: auth.key.id },
          deps.clock.now(),
          ttl,
          credential,
        )
        Object.assign(set.headers, NO_STORE, { 'set-cookie': s.setCookie })
        return { object: 'console.session', signed_in: true, expires_at: iso(s.expiresAt) }
      },
      { body: t.Object({ key: t.String({ maxLength: 200 }) }, { additionalProperties: false }) },
    )
    .delete('/console/me/session', signOut(deps, KEY_SESSION), { body: NoBody })
    .use(keyHolderApi(deps))
}

/**
 * Who a key holder's session belongs to: its key and the key's account, or 401. A session ends
 * with its key's secret (rotated), with the key (disabled, revoked) and with its account (disabled).
 */
function keyHolderGuard(deps: Deps) {
  return new Elysia().resolve({ as: 'scoped' }, async ({ request, set }) => {
    Object.assign(set.headers, NO_STORE)
    let holder: { key: KeyRecord; account: AccountRecord } | null = null
    const s = await findSession(deps.store, KEY_SESSION, request, deps.clock.now(), async (x) => {
      const key = x.kind === 'key' && x.keyId !== null ? await deps.store.getKey(x.keyId) : null
      const account = key && (await deps.store.getAccount(key.accountId))
      holder = key && account ? { key, account } : null
      return keyCredential(key, account)
    })
    if (!s || !holder) throw signedOut()
    return { holder: holder as { key: KeyRecord; account: AccountRecord } }
  })
}

/** The key holder's page's API: every route behind `keyHolderGuard`, pinned to the key's account. */
function keyHolderApi(deps: Deps) {
  return new Elysia({ name: 'switchyard.console.me', prefix: '/console/me/api' })
    .use(keyHolderGuard(deps))
    .get('/overview', async ({ holder: { key, account } }) => {
      const now = deps.clock.now()
      const [usage, hourly, daily, recent] = await Promise.all([
        usageReport(deps, account, key),
        usageSeries(deps, { bucket: 'hour', group_by: 'model' }, now, account.id),
        usageSeries(
          deps,
          { bucket: 'day', from: String(now - 30 * DAY_MS), group_by: 'model' },
          now,
          account.id,
        ),
        requestLogPage(deps, { limit: '20' }, account.id),
      ])
      return { object: 'console.me', usage, hourly, daily, recent: recent.data }
    })
}
