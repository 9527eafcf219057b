/**
 * @module
 * Admin API under `/admin/v1/`, the same operations as the command line, behind the admin guard
 * (`../admin-guard.ts`), which every route of this group passes before anything else.
 */
import { Type } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import type { KeyLimitsPatch } from '../../accounts/key-limits.ts'
import { keyUsage } from '../../accounts/key-usage.ts'
import { keyNameProblem } from '../../accounts/keys.ts'
import { expiryPolicy } from '../../accounts/plans.ts'
import { enabledChange, keyStateChange } from '../../accounts/service.ts'
import { usageReport } from '../../accounts/usage-report.ts'
import { parseIsoTime } from '../../util/clock.ts'
import { GatewayError } from '../../util/errors.ts'
import { type AuditChange, adminGuard } from '../admin-guard.ts'
import type { Deps } from '../deps.ts'
import { NoBody } from '../json-body.ts'
import { KeyLimitsBody } from './admin-key-limits.ts'
import { NoQuery, QueryText } from './no-query.ts'

/**
 * TypeBox's own integer: Elysia's `t.Integer` also takes a numeric string (`"30"`), for query
 * strings. 0 ends the plan now, as the command line's `--days 0` does.
 */
const Days = t.Optional(Type.Integer({ minimum: 0, maximum: 36500 }))
/** An ISO-8601 date or time, as the command line's `--expires-at` takes it. */
const ExpiresAt = t.Optional(t.String({ maxLength: 64 }))
const none = { body: NoBody }
const noQuery = { query: NoQuery }

/**
 * A plan's term as `createAccount` / `setPlan` take it after the plan: `days`, or `expires_at`
 * (never both), refused as the command line refuses `--days` with `--expires-at` or a date that
 * does not exist.
 */
function term(body: { days?: number; expires_at?: string }): [days?: number, expiresAt?: number] {
  if (body.expires_at === undefined) return [body.days, undefined]
  if (body.days !== undefined) {
    throw new GatewayError(400, 'invalid_value', 'expires_at: give days or expires_at, not both.', {
      param: 'expires_at',
    })
  }
  const at = parseIsoTime(body.expires_at)
  if (at === null) {
    throw new GatewayError(
      400,
      'invalid_value',
      'expires_at: must be an ISO-8601 date or time that exists, such as 2030-01-31 or 2030-01-31T00:00:00Z.',
      { param: 'expires_at' },
    )
  }
  return [undefined, at]
}

export function adminRoutes(deps: Deps) {
  const svc = deps.accounts
  /** As the command line's `accounts disable|enable`: the audit line says what it left. */
  const setEnabled = async (name: string, enabled: boolean, said: (c: AuditChange) => void) => {
    const r = await svc.setEnabled(name, enabled)
    said({ change: enabledChange(r) })
    return r.account
  }
  /** As the command line's `keys disable|enable|revoke`: the audit line says what it left. */
  const setKeyState = async (
    id: string,
    state: 'enabled' | 'disabled' | 'revoked',
    said: (c: AuditChange) => void,
  ) => {
    const r = await svc.setKeyState(id, state)
    said({ change: keyStateChange(r) })
    return r.key
  }
  return (
    new Elysia({ name: 'switchyard.admin', prefix: '/admin/v1' })
      .use(adminGuard(deps))
      .get(
        '/plans',
        () => ({
          object: 'list',
          data: Object.entries(deps.config.plans).map(([name, p]) => ({
            name,
            default: name === deps.config.defaultPlan,
            ...p,
            // What happens at the plan's end (its `days`, or an account's own end), the default applied.
            on_expiry: expiryPolicy(deps.config, name),
          })),
        }),
        noQuery,
      )
      // Paged as the request log is (accounts/list-page.ts); other parameters are 400s naming them.
      .get('/accounts', ({ query }) => svc.accountsPage(query), {
        query: t.Object({ cursor: QueryText, limit: QueryText }),
      })
      .post(
        '/accounts',
        ({ body, auditChange }) => {
          auditChange({
            target: body.name,
            change: { plan: body.plan, days: body.days, expires_at: body.expires_at },
          })
          return svc.createAccount(body.name, body.plan, ...term(body))
        },
        {
          body: t.Object(
            { name: t.String(), plan: t.Optional(t.String()), days: Days, expires_at: ExpiresAt },
            { additionalProperties: false },
          ),
        },
      )
      .get(
        '/accounts/:name',
        async ({ params }) => {
          const a = await svc.getAccount(params.name)
          return { ...(await svc.view(a)), plan_history: await svc.planHistory(params.name) }
        },
        noQuery,
      )
      .post(
        '/accounts/:name/plan',
        ({ params, body, auditChange }) => {
          auditChange({ change: { plan: body.plan, days: body.days, expires_at: body.expires_at } })
          return svc.setPlan(params.name, body.plan, ...term(body))
        },
        {
          body: t.Object(
            { plan: t.String(), days: Days, expires_at: ExpiresAt },
            { additionalProperties: false },
          ),
        },
      )
      .post(
        '/accounts/:name/disable',
        ({ params, auditChange }) => setEnabled(params.name, false, auditChange),
        none,
      )
      .post(
        '/accounts/:name/enable',
        ({ params, auditChange }) => setEnabled(params.name, true, auditChange),
        none,
      )
      .get(
        '/accounts/:name/usage',
        async ({ params }) => usageReport(deps, await svc.getAccount(params.name), null),
        noQuery,
      )
      .get('/keys', ({ query }) => svc.keysPage(query.account, query), {
        query: t.Object({ account: QueryText, cursor: QueryText, limit: QueryText }),
      })
      .post(
        '/keys',
        async ({ body, auditChange }) => {
          const problem = body.name === undefined ? undefined : keyNameProblem(body.name)
          if (problem) throw new GatewayError(400, 'invalid_value', `name ${problem}.`, { param: 'name' })
          // As the command line's `keys create`: the account is the target; the new key's id is
          // what was made (never the key itself).
          auditChange({ target: body.account, change: { name: body.name } })
          const k = await svc.createKey(body.account, body.name, body.limits as KeyLimitsPatch)
          auditChange({ change: { key: k.id, prefix: k.prefix, limits: k.limits } })
          return k
        },
        {
          body: t.Object(
            {
              account: t.String(),
              name: t.Optional(t.String()),
              limits: t.Optional(KeyLimitsBody),
            },
            { additionalProperties: false },
          ),
        },
      )
      // The key beside its usage today and this month, the prompt cache's tokens among it.
      .get(
        '/keys/:id',
        async ({ params }) => ({
          ...(await svc.keyView(params.id)),
          usage: await keyUsage(deps.store, params.id, deps.clock.now()),
        }),
        noQuery,
      )
      .post(
        '/keys/:id/disable',
        ({ params, auditChange }) => setKeyState(params.id, 'disabled', auditChange),
        none,
      )
      .post(
        '/keys/:id/enable',
        ({ params, auditChange }) => setKeyState(params.id, 'enabled', auditChange),
        none,
      )
      .post(
        '/keys/:id/revoke',
        ({ params, auditChange }) => setKeyState(params.id, 'revoked', auditChange),
        none,
      )
      .post('/keys/:id/rotate', ({ params }) => svc.rotateKey(params.id), none)
      .post('/keys/:id/unsuspend', ({ params }) => svc.unsuspendKey(params.id), none)
  )
}
