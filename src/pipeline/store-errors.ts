/**
 * @module
 * The responses for a store that cannot answer: 503 `store_busy` when another writer held the
 * lock past the request's deadline, 503 `store_unavailable` when the disk is full or the
 * database is unusable. Both carry `retry-after`; neither is the client's fault.
 */
import { StoreBusyError, StoreUnavailableError } from '../store/index.ts'
import { GatewayError } from '../util/errors.ts'

/** Seconds a client should wait after store_unavailable: an operator has to free space first. */
const UNAVAILABLE_RETRY_S = 30

export function storeFailure(err: unknown): GatewayError | null {
  if (err instanceof StoreBusyError)
    return new GatewayError(
      503,
      'store_busy',
      'The gateway is overloaded (its database is busy); retry in a second.',
      {
        type: 'api_error',
        headers: { 'retry-after': '1' },
      },
    )
  if (err instanceof StoreUnavailableError)
    return new GatewayError(
      503,
      'store_unavailable',
      err.reason === 'disk_full'
        ? 'The gateway cannot record requests: its disk is full. Retry later; the operator has been alerted in the log.'
        : 'The gateway cannot reach its database. Retry later; the operator has been alerted in the log.',
      { type: 'api_error', headers: { 'retry-after': String(UNAVAILABLE_RETRY_S) } },
    )
  return null
}
