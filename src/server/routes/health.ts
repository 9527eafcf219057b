/**
 * @module
 * `GET /healthz` and `GET /metrics` (Prometheus text). Health asks the store only what it can
 * answer without a lock (disk full, database file lost), so it answers at once even while
 * another process holds the database's write lock.
 */
import { Elysia } from 'elysia'
import type { Deps } from '../deps.ts'

export function healthRoutes(deps: Deps) {
  return new Elysia({ name: 'switchyard.health' })
    .get('/healthz', ({ set }) => {
      const store = deps.store.health()
      if (store.ok) return { status: 'ok', pid: process.pid }
      set.status = 503
      return { status: 'unhealthy', pid: process.pid, store: { reason: store.reason, detail: store.detail } }
    })
    .get(
      '/metrics',
      async () =>
        new Response(await deps.metrics.render(), {
          headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
        }),
    )
}
