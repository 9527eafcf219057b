/**
 * @module
 * The one converter from whatever was thrown to a `GatewayError`, for every surface (each renders
 * it in its own shape). What a value that is not already a `GatewayError` becomes depends on where
 * it was caught (`Caught`): on the request's own path a store that cannot answer is its 503 and
 * anything else a 500 that hides internals and is logged; around an upstream call, what came from
 * the network (`fromTheWire`) is the upstream's failure (502, the detail to the log only: it may
 * name the upstream's URL) and anything else the gateway's own fault (500 `internal_error`, kind
 * `internal`: `gatewayFault`, logged by the attempt loop with its stack; a store that cannot
 * answer keeps its 503, of kind `internal` too); inside a stream already under way, the stream's
 * failure (502), or the gateway's fault likewise.
 *
 * @example
 * toGatewayError(new StoreBusyError(5000), 'request', log, rid).code // 'store_busy'
 * toGatewayError(Object.assign(new TypeError('…'), { code: 'ECONNRESET' }), 'upstream').code // 'upstream_error'
 * toGatewayError(new TypeError('null is not an object'), 'upstream').code // 'internal_error'
 */
import { withFacts } from '../providers/failure-facts.ts'
import { abortError, fromTheWire, gatewayFault, networkErrorDetail } from '../providers/http.ts'
import { storeError } from '../store/errors.ts'
import { GATEWAY_FAILURE, GatewayError } from '../util/errors.ts'
import type { Logger } from '../util/log.ts'

/** Where a thrown value was caught. */
export type Caught = 'request' | 'upstream' | 'stream'

export function toGatewayError(error: unknown, where: Caught, log?: Logger, rid?: unknown): GatewayError {
  if (error instanceof GatewayError) return error
  if (where !== 'request' && !fromTheWire(error)) {
    // The gateway's side, not the upstream's: a store that cannot answer keeps its own 503.
    const store = storeError(error)
    return store ? withFacts(store, { gateway: true }) : gatewayFault(error)
  }
  if (where === 'stream')
    return new GatewayError(
      502,
      'upstream_error',
      'The upstream stream failed unexpectedly. Retry the request.',
    )
  if (where === 'request') {
    const store = storeError(error)
    if (store) {
      if (store.code === GATEWAY_FAILURE.storeUnavailable)
        log?.error('store unavailable', { request_id: rid, error: (error as Error).message })
      return store
    }
  }
  if ((error as Error)?.name === 'AbortError') return abortError(error)
  if (where === 'upstream')
    return new GatewayError(
      502,
      'upstream_error',
      'Upstream call failed; it has been logged with this request id.',
      {
        detail: networkErrorDetail(error),
      },
    )
  log?.error('unhandled error', { request_id: rid, error: (error as Error)?.stack ?? String(error) })
  return new GatewayError(
    500,
    GATEWAY_FAILURE.internal,
    'Internal error; it has been logged with this request id.',
    {
      type: 'api_error',
    },
  )
}
