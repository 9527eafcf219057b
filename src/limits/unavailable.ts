/** @module The refusal when the limiter's engine cannot be reached: fail closed, retry soon. */
import { GATEWAY_FAILURE, GatewayError } from '../util/errors.ts'

/** Seconds a client is told to wait while the limiter is unreachable. */
export const UNAVAILABLE_RETRY_S = 1

export function limiterUnavailable(): GatewayError {
  return new GatewayError(
    503,
    GATEWAY_FAILURE.limiterUnavailable,
    `The rate limiter is unreachable, so no request can be admitted; retry in ${UNAVAILABLE_RETRY_S} s.`,
    { type: 'api_error', headers: { 'retry-after': String(UNAVAILABLE_RETRY_S) } },
  )
}
