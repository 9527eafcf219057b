/**
 * @module
 * `GET /healthz` and `GET /metrics` (Prometheus text). Health asks the store only what it can
 * answer without a lock (disk full, database file lost), so it answers at once even while
 * another process holds the database's write lock. `/metrics` asks for `metrics.token` as a bearer
 * token when one is configured: its labels name the models accounts use and providers' keys. Wrong
 * tokens are throttled per client address as the admin token's are (`deps.authThrottle`, the same
 * one): after five a minute, an address's wrong ones are answered 429 until the minute ends; the
 * right token always passes.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import { authThrottled } from '../../auth/throttle.ts'
import { GatewayError } from '../../util/errors.ts'
import { bearerToken } from '../../util/key-shape.ts'
import type { Deps } from '../deps.ts'

const digest = (s: string) => createHash('sha256').update(s).digest()

/** Throws 401 unless `header` is `Bearer <token>`; no token configured → nothing to check. */
function metricsTokenCheck(token: string | null): (header: string | null) => void {
  // Compared as digests: equal length whatever is sent, so the comparison time says nothing.
  const expected = token === null ? null : digest(token)
  return (header) => {
    if (expected === null) return
    const given = bearerToken(header)
    if (given !== null && timingSafeEqual(digest(given), expected)) return
    throw new GatewayError(
      401,
      'invalid_metrics_token',
      header === null
        ? '/metrics needs the metrics token: send Authorization: Bearer <metrics.token>.'
        : 'The bearer token is not the metrics token (metrics.token).',
      { type: 'authentication_error', headers: { 'www-authenticate': 'Bearer realm="metrics"' } },
    )
  }
}

const throttled = authThrottled('metrics_auth_throttled', 'authentications')

export function healthRoutes(deps: Deps) {
  const checkToken = metricsTokenCheck(deps.config.metrics.token)
  return new Elysia({ name: 'switchyard.health' })
    .get('/healthz', ({ set }) => {
      const store = deps.store.health()
      if (store.ok) return { status: 'ok', pid: process.pid }
      set.status = 503
      return { status: 'unhealthy', pid: process.pid, store: { reason: store.reason, detail: store.detail } }
    })
    .get('/metrics', async ({ request, server }) => {
      const header = request.headers.get('authorization')
      // A missing header guesses nothing: not counted.
      deps.authThrottle.guard(
        server?.requestIP(request)?.address ?? 'unknown',
        () => checkToken(header),
        throttled,
        () => header !== null,
      )
      return new Response(await deps.metrics.render(), {
        headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
      })
    })
}
