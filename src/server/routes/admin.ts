/**
 * @module
 * Admin API under `/admin/v1/`, the same operations as the command line. Off (404) when no
 * admin token is configured; a user key is refused (403) and any other bearer gets 401.
 */
import { timingSafeEqual } from 'node:crypto'
import { Elysia, t } from 'elysia'
import { KEY_PREFIX } from '../../accounts/keys.ts'
import { usageReport } from '../../accounts/usage-report.ts'
import { consoleAdmin } from '../../console/admin-session.ts'
import { GatewayError } from '../../util/errors.ts'
import { bearer } from '../auth.ts'
import type { Deps } from '../deps.ts'
import { adminHistoryRoutes } from './admin-history.ts'

export function checkAdmin(token: string | null, header: string | null): void {
  if (token === null) {
    throw new GatewayError(
      404,
      'not_found',
      'The admin API is off; set admin.token in the config to turn it on.',
    )
  }
  const given = bearer(header)
  if (given.startsWith(KEY_PREFIX)) {
    throw new GatewayError(403, 'admin_only', 'User API keys cannot use the admin API; use the admin token.')
  }
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new GatewayError(401, 'invalid_admin_token', 'Incorrect admin token.', {
      type: 'authentication_error',
    })
  }
}

const Days = t.Optional(t.Integer({ minimum: 1, maximum: 36500 }))

export function adminRoutes(deps: Deps) {
  const svc = deps.accounts
  const token = deps.config.admin.token
  return (
    new Elysia({ name: 'switchyard.admin', prefix: '/admin/v1' })
      // onRequest runs before parsing and validation, so an unauthenticated caller learns nothing.
      // It runs for every request, so the path is found without parsing a URL object.
      .onRequest(async ({ request }) => {
        const url = request.url
        if (url.startsWith('/admin/', url.indexOf('/', url.indexOf('//') + 2))) {
          if (token !== null && (await consoleAdmin(deps, request))) return
          checkAdmin(token, request.headers.get('authorization'))
        }
      })
      .get('/plans', () => ({
        object: 'list',
        data: Object.entries(deps.config.plans).map(([name, p]) => ({
          name,
          default: name === deps.config.defaultPlan,
          ...p,
        })),
      }))
      .get('/accounts', async () => ({ object: 'list', data: await svc.listAccounts() }))
      .post('/accounts', ({ body }) => svc.createAccount(body.name, body.plan, body.days), {
        body: t.Object(
          { name: t.String(), plan: t.Optional(t.String()), days: Days },
          { additionalProperties: false },
        ),
      })
      .get('/accounts/:name', async ({ params }) => {
        const a = await svc.getAccount(params.name)
        return { ...(await svc.view(a)), plan_history: await svc.planHistory(params.name) }
      })
      .post('/accounts/:name/plan', ({ params, body }) => svc.setPlan(params.name, body.plan, body.days), {
        body: t.Object({ plan: t.String(), days: Days }, { additionalProperties: false }),
      })
      .post('/accounts/:name/disable', ({ params }) => svc.setEnabled(params.name, false))
      .post('/accounts/:name/enable', ({ params }) => svc.setEnabled(params.name, true))
      .get('/accounts/:name/usage', async ({ params }) =>
        usageReport(deps, await svc.getAccount(params.name), null),
      )
      .get('/keys', async ({ query }) => ({ object: 'list', data: await svc.listKeys(query.account) }), {
        query: t.Object({ account: t.Optional(t.String()) }),
      })
      .post('/keys', ({ body }) => svc.createKey(body.account, body.name), {
        body: t.Object(
          { account: t.String(), name: t.Optional(t.String({ maxLength: 200 })) },
          { additionalProperties: false },
        ),
      })
      .get('/keys/:id', ({ params }) => svc.keyView(params.id))
      .post('/keys/:id/disable', ({ params }) => svc.setKeyState(params.id, 'disabled'))
      .post('/keys/:id/enable', ({ params }) => svc.setKeyState(params.id, 'enabled'))
      .post('/keys/:id/revoke', ({ params }) => svc.setKeyState(params.id, 'revoked'))
      .post('/keys/:id/rotate', ({ params }) => svc.rotateKey(params.id))
      .post('/keys/:id/unsuspend', ({ params }) => svc.unsuspendKey(params.id))
      .use(adminHistoryRoutes(deps))
  )
}
