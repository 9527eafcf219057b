/**
 * @module
 * `PATCH /admin/v1/keys/:id/limits`: a key's own limits (DESIGN §11), the admin API's
 * `keys set-limits`. JSON merge semantics: a field left out is kept, `null` clears it. Refusals
 * are 400s naming the field (`tpm`, `budget.usd`, `models`), including a limit outside the
 * account's plan (see accounts/key-limits.ts for what "within" means).
 */
import { Elysia, t } from 'elysia'
import type { KeyLimitsPatch } from '../../accounts/key-limits.ts'
import { adminGuard } from '../admin-guard.ts'
import type { Deps } from '../deps.ts'

/**
 * Any JSON: `applyPatch` checks it field by field, refusing unknown fields (Elysia would strip
 * them silently) with messages that say what is allowed. Shared with `POST /admin/v1/keys`.
 */
export const KeyLimitsBody = t.Unknown()

export function adminKeyLimitRoutes(deps: Deps) {
  return new Elysia({ name: 'switchyard.admin.key-limits', prefix: '/admin/v1' }).use(adminGuard(deps)).patch(
    '/keys/:id/limits',
    async ({ params, body, auditChange }) => {
      const k = await deps.accounts.setKeyLimits(params.id, body as KeyLimitsPatch)
      auditChange({ change: { limits: k.limits } })
      return k
    },
    { body: KeyLimitsBody },
  )
}
