/**
 * @module
 * How the stream writer words the ways a stream fails: the client gone, no first token in time
 * (a failure not already a `GatewayError` becomes the stream's: `toGatewayError(e, 'stream')`, errors.ts).
 */
import { withFacts } from '../../providers/failure-facts.ts'
import { abortError } from '../../providers/http.ts'
import { GatewayError } from '../../util/errors.ts'

export const clientClosed = (): GatewayError => abortError(undefined)

export function firstTokenTimeout(label: string, ms: number): GatewayError {
  const err = new GatewayError(
    504,
    'upstream_timeout',
    `Upstream '${label}' sent no content within ${ms} ms.`,
  )
  return withFacts(err, { transport: 'no_first_token' })
}
