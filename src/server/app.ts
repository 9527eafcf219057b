/**
 * @module
 * Assembles the Elysia app from its parts. No module state: everything comes in through `deps`.
 *
 * @example
 * const app = createApp(deps)
 * const res = await app.handle(new Request('http://localhost/healthz'))
 */
import { Elysia } from 'elysia'
import { Pipeline } from '../pipeline/run.ts'
import type { Deps } from './deps.ts'
import { errorHandling } from './errors.ts'
import { rejectInvalidHost } from './host.ts'
import { adminRoutes } from './routes/admin.ts'
import { chatRoutes } from './routes/chat.ts'
import { healthRoutes } from './routes/health.ts'
import { modelRoutes } from './routes/models.ts'
import { usageRoutes } from './routes/usage.ts'

export function createApp(deps: Deps) {
  const pipeline = new Pipeline(deps)
  // standardHostname false: Elysia otherwise finds the path from index 11 of request.url, which
  // puts it inside the path for hosts under four characters (`Host: a`, `GET /xx/admin/v1/…`
  // was routed as `/admin/v1/…`). Only `http://` URLs reach it (the server has no TLS, and
  // rejectInvalidHost refuses relative ones).
  return new Elysia({ handler: { standardHostname: false } })
    .use(errorHandling(deps.log))
    .onRequest(({ request }) => rejectInvalidHost(request))
    .onAfterResponse(({ route, set }) => deps.metrics.request(route || 'unknown', Number(set.status ?? 200)))
    .use(healthRoutes(deps))
    .use(usageRoutes(deps))
    .use(modelRoutes(deps))
    .use(chatRoutes(pipeline))
    .use(adminRoutes(deps))
}

export type App = ReturnType<typeof createApp>
