/**
 * @module
 * Assembles the Elysia app from its parts. No module state: everything comes in through `deps`.
 * Every request is an exchange in `deps.traffic` from its first byte to its last: that is where
 * the access log, the request metrics and graceful shutdown meet.
 *
 * @example
 * const app = createApp(deps)
 * const res = await app.handle(new Request('http://localhost/healthz'))
 */
import { Elysia } from 'elysia'
import { consoleRoutes } from '../console/routes.ts'
import { Pipeline } from '../pipeline/run.ts'
import { createCors } from '../server/cors.ts'
import type { Deps } from '../server/deps.ts'
import { errorHandling } from '../server/errors.ts'
import { hostCheck } from '../server/host.ts'
import { adminRoutes } from '../server/routes/admin.ts'
import { adminDeliveryRoutes } from '../server/routes/admin-deliveries.ts'
import { adminHistoryRoutes } from '../server/routes/admin-history.ts'
import { adminKeyLimitRoutes } from '../server/routes/admin-key-limits.ts'
import { adminOverviewRoutes } from '../server/routes/admin-overview.ts'
import { adminRefusalRoutes } from '../server/routes/admin-refusals.ts'
import { adminReloadRoutes } from '../server/routes/admin-reload.ts'
import { adminSessionRoutes } from '../server/routes/admin-sessions.ts'
import { consoleOffRoutes } from '../server/routes/console-off.ts'
import { healthRoutes } from '../server/routes/health.ts'
import { modelRoutes } from '../server/routes/models.ts'
import { surfaceRoutes } from '../server/routes/surfaces.ts'
import { usageRoutes } from '../server/routes/usage.ts'
import { shuttingDownError } from '../util/errors.ts'

export function createApp(deps: Deps) {
  const { traffic } = deps
  const cors = createCors(deps.config.server.corsOrigins)
  const pipeline = new Pipeline(deps)
  const checkHost = hostCheck(deps.config.server)
  // standardHostname false: Elysia otherwise finds the path from index 11 of request.url, which
  // puts it inside the path for hosts under four characters (`Host: a`, `GET /xx/admin/v1/…`
  // was routed as `/admin/v1/…`). Only `http://` URLs reach it (the server has no TLS, and
  // rejectInvalidHost refuses relative ones).
  // normalize false: a schema's `additionalProperties: false` refuses a field it does not name
  // (400 naming it). Elysia otherwise drops it silently: `{"plan": "pro", "dayz": 30}` set a plan
  // without its days, `{"account": "a", "limitz": {...}}` made a key without limits.
  return new Elysia({
    handler: { standardHostname: false },
    normalize: false,
  })
    .use(errorHandling(deps.log, traffic))
    .onRequest(({ request, set }) => {
      const ex = traffic.begin(request, String(set.headers['x-request-id']))
      checkHost(request)
      const preflight = cors?.apply(request, set.headers)
      if (traffic.draining && ex.surface !== 'metrics') throw shuttingDownError()
      if (preflight) set.status = 204
      return preflight
    })
    .onAfterResponse(({ request, set }) => {
      const ex = traffic.of(request)
      if (ex && !ex.deferred) traffic.end(ex, ex.status ?? Number(set.status ?? 200))
    })
    .use(healthRoutes(deps))
    .use(usageRoutes(deps))
    .use(modelRoutes(deps))
    .use(surfaceRoutes(traffic, pipeline))
    .use(adminRoutes(deps))
    .use(adminHistoryRoutes(deps))
    .use(adminOverviewRoutes(deps))
    .use(adminSessionRoutes(deps))
    .use(adminKeyLimitRoutes(deps))
    .use(adminRefusalRoutes(deps))
    .use(adminDeliveryRoutes(deps))
    .use(adminReloadRoutes(deps))
    .use(consoleRoutes(deps))
    .use(consoleOffRoutes(deps))
}

export type App = ReturnType<typeof createApp>
