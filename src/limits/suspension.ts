/**
 * @module
 * The suspension policy: a key refused too often — for its rate limits, its budget, or (with
 * `count_invalid`) for invalid requests — is suspended for a while. The refusal count itself is
 * kept by each limiter backend, inside its atomic admission step; the store keeps when a
 * suspension ends, not which refusals led to it, so the 403 names every cause.
 */
import type { Config } from '../config/index.ts'
import { GatewayError } from '../util/errors.ts'
import type { SuspensionPolicy } from './types.ts'

/** The policy an admission applies, or null when suspension is off. */
export function suspensionPolicy(config: Config): SuspensionPolicy | null {
  const s = config.suspension
  return s.enabled ? { maxRejections: s.maxRejections, windowMs: s.windowMs, durationMs: s.durationMs } : null
}

/** 403 `key_suspended` with the time left as `retry-after`. */
export function suspendedError(prefix: string, until: number | null, now: number): GatewayError {
  const ms = Math.max(0, (until ?? now) - now)
  return new GatewayError(
    403,
    'key_suspended',
    `API key ${prefix}… is suspended for ${Math.ceil(ms / 1000)} s after repeated refused requests (rate limits, budget, invalid requests). Retry after that, within the key's limits and with valid requests; an operator can lift the suspension sooner.`,
    { headers: { 'retry-after': String(Math.ceil(ms / 1000)), 'retry-after-ms': String(ms) } },
  )
}
