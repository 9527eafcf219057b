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
 * The body's shape; values are checked by `applyPatch`, whose messages say what is allowed
 * (TypeBox's own for a union would not). Shared with `POST /admin/v1/keys` (its `limits`).
 */
export const KeyLimitsBody = t.Object(
  {
    rpm: t.Optional(t.Unknown()),
    rpd: t.Optional(t.Unknown()),
    tpm: t.Optional(t.Unknown()),
    tpd: t.Optional(t.Unknown()),
    budget: t.Optional(
      t.Union([
        t.Null(),
        t.Object({ usd: t.Unknown(), period: t.Optional(t.Unknown()) }, { additionalProperties: false }),
      ]),
    ),
    models: t.Optional(t.Unknown()),
  },
  { additionalProperties: false },
)

export function adminKeyLimitRoutes(deps: Deps) {
  return new Elysia({ name: 'switchyard.admin.key-limits', prefix: '/admin/v1' })
    .use(adminGuard(deps))
    .patch(
      '/keys/:id/limits',
      ({ params, body }) => deps.accounts.setKeyLimits(params.id, body as KeyLimitsPatch),
      {
        body: KeyLimitsBody,
      },
    )
}
