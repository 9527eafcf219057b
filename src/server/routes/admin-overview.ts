/**
 * @module
 * Admin endpoints for what an operator looks at first: `GET /admin/v1/overview/top` (today's
 * busiest keys or accounts) and `GET /admin/v1/overview/providers` (each provider's upstream
 * errors by code), `GET /admin/v1/overview/spend` (money today and this month, per account and
 * key, beside their budgets; `?account=` for one account's) and `GET /admin/v1/overview/upstreams`
 * (attempts by outcome per provider and model, and every circuit's state). Behind the admin guard like every admin route group; bounded reads
 * (`../../usage/overview.ts`).
 */
import { Elysia, t } from 'elysia'
import { upstreamFigures } from '../../traffic/upstreams.ts'
import { providerHealth, topOfDay } from '../../usage/overview.ts'
import { spendOverview } from '../../usage/spend.ts'
import { adminGuard } from '../admin-guard.ts'
import type { Deps } from '../deps.ts'
import { NoQuery, QueryText } from './no-query.ts'

export function adminOverviewRoutes(deps: Deps) {
  return new Elysia({ name: 'switchyard.admin.overview', prefix: '/admin/v1' })
    .use(adminGuard(deps))
    .get('/overview/top', ({ query }) => topOfDay(deps, query, deps.clock.now()), {
      query: t.Object({ by: QueryText, limit: QueryText }),
    })
    .get('/overview/providers', ({ query }) => providerHealth(deps, query, deps.clock.now()), {
      query: t.Object({ hours: QueryText }),
    })
    .get('/overview/spend', ({ query }) => spendOverview(deps, query, deps.clock.now()), {
      query: t.Object({ account: QueryText }),
    })
    .get('/overview/upstreams', () => upstreamFigures(deps.metrics), { query: NoQuery })
}
