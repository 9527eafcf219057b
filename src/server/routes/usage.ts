/**
 * @module
 * `GET /v1/usage`: answers for any existing key, enabled or not — so it is throttled per key
 * (USAGE_THROTTLE), or a disabled or suspended key could still keep the gateway busy with it.
 */
import { Elysia } from 'elysia'
import { usageReport } from '../../accounts/usage-report.ts'
import { authenticate } from '../../auth/authenticate.ts'
import { type BucketPolicy, TokenBuckets } from '../../limits/token-bucket.ts'
import { GatewayError } from '../../util/errors.ts'
import type { Deps } from '../deps.ts'

/** A dashboard polling every second is served; a loop is not. Per key, per process. */
export const USAGE_THROTTLE: Readonly<BucketPolicy> = Object.freeze({
  perMinute: 60,
  burst: 20,
  maxKeys: 10_000,
})

export function usageRoutes(deps: Deps) {
  const throttle = new TokenBuckets(deps.clock, USAGE_THROTTLE)
  return new Elysia({ name: 'switchyard.usage' }).get('/v1/usage', async ({ request }) => {
    const auth = await authenticate(deps, request.headers.get('authorization'), true)
    const ex = deps.traffic.of(request)
    if (ex) {
      ex.account = auth.account.name
      ex.keyPrefix = auth.key.prefix
    }
    const waitMs = throttle.take(auth.key.id)
    if (waitMs > 0) throw throttled(waitMs)
    return usageReport(deps, auth.account, auth.key)
  })
}

function throttled(waitMs: number): GatewayError {
  const s = Math.ceil(waitMs / 1000)
  return new GatewayError(
    429,
    'rate_limit_exceeded',
    `GET /v1/usage allows ${USAGE_THROTTLE.perMinute} requests a minute per key (bursts of ${USAGE_THROTTLE.burst}); retry in ${s} s.`,
    { headers: { 'retry-after': String(s), 'retry-after-ms': String(waitMs) } },
  )
}
