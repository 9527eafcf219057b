/**
 * @module
 * Admin endpoints for what an operator looks at first: `GET /admin/v1/overview/top` (today's
 * busiest keys or accounts) and `GET /admin/v1/overview/providers` (each provider's upstream
 * errors by code). Behind the admin guard like every admin route group; bounded reads
 * (`../../usage/overview.ts`).
 */
import { Elysia, t } from 'elysia'
import { providerHealth, topOfDay } from '../../usage/overview.ts'
import { adminGuard } from '../admin-guard.ts'
import type { Deps } from '../deps.ts'
import { QueryText } from './no-query.ts'

export function adminOverviewRoutes(deps: Deps) {
  return new Elysia({ name: 'switchyard.admin.overview', prefix: '/admin/v1' })
    .use(adminGuard(deps))
    .get('/overview/top', ({ query }) => topOfDay(deps, query, deps.clock.now()), {
      query: t.Object({ by: QueryText, limit: QueryText }),
    })
    .get('/overview/providers', ({ query }) => providerHealth(deps, query, deps.clock.now()), {
      query: t.Object({ hours: QueryText }),
    })
}
