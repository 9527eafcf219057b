/**
 * @module
 * Assembles the Elysia app from its parts. No module state: everything comes in through `deps`.
 *
 * @example
 * const app = createApp(deps)
 * const res = await app.handle(new Request('http://localhost/healthz'))
 */
import { Elysia } from 'elysia'
import { consolePages, consoleRoutes } from '../console/routes.ts'
import type { Deps } from './deps.ts'
import { errorHandling } from './errors.ts'
import { adminRoutes } from './routes/admin.ts'
import { chatRoutes } from './routes/chat.ts'
import { healthRoutes } from './routes/health.ts'
import { modelRoutes } from './routes/models.ts'
import { usageRoutes } from './routes/usage.ts'

export function createApp(deps: Deps) {
  return new Elysia({ serve: { routes: consolePages(deps) } as never })
    .use(errorHandling(deps.log))
    .onAfterResponse(({ route, set }) => deps.metrics.request(route || 'unknown', Number(set.status ?? 200)))
    .use(healthRoutes(deps))
    .use(usageRoutes(deps))
    .use(modelRoutes(deps))
    .use(chatRoutes(deps))
    .use(adminRoutes(deps))
    .use(consoleRoutes(deps))
}

export type App = ReturnType<typeof createApp>
