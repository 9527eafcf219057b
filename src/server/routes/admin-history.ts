/**
 * @module
 * Admin endpoints the console reads: usage over time, the request log, one request, live
 * figures, and the model catalogue — models and every alias — with the plans that reach each. Behind the admin guard
 * like every admin route group.
 */
import { Elysia, t } from 'elysia'
import { liveFigures } from '../../traffic/live.ts'
import { requestLogPage, requestView, usageSeries } from '../../usage/history.ts'
import { GatewayError } from '../../util/errors.ts'
import { adminGuard } from '../admin-guard.ts'
import type { Deps } from '../deps.ts'
import { operatorEntries } from './models.ts'
import { NoQuery, QueryText } from './no-query.ts'

export function adminHistoryRoutes(deps: Deps) {
  const created = Math.floor(deps.clock.now() / 1000)
  return new Elysia({ name: 'switchyard.admin.history', prefix: '/admin/v1' })
    .use(adminGuard(deps))
    .get('/usage/series', ({ query }) => usageSeries(deps, query, deps.clock.now()), {
      query: t.Object({
        bucket: QueryText,
        from: QueryText,
        to: QueryText,
        account: QueryText,
        key: QueryText,
        model: QueryText,
        group_by: QueryText,
      }),
    })
    .get('/requests', ({ query }) => requestLogPage(deps, query), {
      query: t.Object({
        account: QueryText,
        key: QueryText,
        model: QueryText,
        surface: QueryText,
        status: QueryText,
        from: QueryText,
        to: QueryText,
        cursor: QueryText,
        limit: QueryText,
      }),
    })
    .get(
      '/requests/:id',
      async ({ params }) => {
        const id = /^\d{1,15}$/.test(params.id) ? Number(params.id) : null
        const row = id === null ? null : await deps.store.requestById(id)
        if (!row)
          throw new GatewayError(404, 'request_not_found', `no request-log row with id '${params.id}'`)
        return requestView(row)
      },
      { query: NoQuery },
    )
    .get('/live', () => liveFigures(deps.metrics), { query: NoQuery })
    .get(
      '/models',
      () => ({ object: 'list', data: operatorEntries(deps.catalogue, created, deps.config.plans) }),
      { query: NoQuery },
    )
}
