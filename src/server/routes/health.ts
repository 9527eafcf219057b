/** @module `GET /healthz` and `GET /metrics` (Prometheus text). */
import { Elysia } from 'elysia'
import type { Deps } from '../deps.ts'

export function healthRoutes(deps: Deps) {
  return new Elysia({ name: 'switchyard.health' })
    .get('/healthz', () => ({ status: 'ok', pid: process.pid }))
    .get(
      '/metrics',
      async () =>
        new Response(await deps.metrics.render(), {
          headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
        }),
    )
}
