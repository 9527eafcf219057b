/**
 * @module
 * The one converter from whatever was thrown to a `GatewayError`, for every surface (each renders
 * it in its own shape). Unknown errors become a 500 that hides internals and is logged.
 */
import { abortError } from '../providers/http.ts'
import { GatewayError } from '../util/errors.ts'
import type { Logger } from '../util/log.ts'
import { storeFailure } from './store-errors.ts'

/** `code` is Elysia's error code when the framework raised it (`NOT_FOUND`, `PARSE`, ...). */
export function toGatewayError(
  code: string | number,
  error: unknown,
  log: Logger,
  rid: unknown,
): GatewayError {
  if (error instanceof GatewayError) return error
  const store = storeFailure(error)
  if (store) {
    if (store.code === 'store_unavailable')
      log.error('store unavailable', { request_id: rid, error: (error as Error).message })
    return store
  }
  switch (code) {
    case 'NOT_FOUND':
      return new GatewayError(
        404,
        'not_found',
        'Unknown route. See the README for the API (POST /v1/chat/completions, /v1/messages, /v1/responses, /v1/embeddings; GET /v1/models, /v1/usage).',
      )
    case 'PARSE':
      // A parse hook that refuses (the admin guard) throws a GatewayError, which Elysia wraps.
      if ((error as Error)?.cause instanceof GatewayError) return (error as Error).cause as GatewayError
      return new GatewayError(
        400,
        'invalid_json',
        'The request body could not be parsed; send valid JSON with Content-Type: application/json.',
      )
  }
  if ((error as Error)?.name === 'AbortError') return abortError(error)
  log.error('unhandled error', { request_id: rid, error: (error as Error)?.stack ?? String(error) })
  return new GatewayError(500, 'internal_error', 'Internal error; it has been logged with this request id.', {
    type: 'api_error',
  })
}
