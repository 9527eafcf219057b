/**
 * @module
 * The one converter from whatever was thrown to a `GatewayError`, for every surface (each renders
 * it in its own shape). Unknown errors become a 500 that hides internals and is logged.
 */
import { abortError } from '../providers/http.ts'
import { GatewayError, pointerToParam } from '../util/errors.ts'
import type { Logger } from '../util/log.ts'

/** `code` is Elysia's error code when the framework raised it (`NOT_FOUND`, `PARSE`, ...). */
export function toGatewayError(
  code: string | number,
  error: unknown,
  log: Logger,
  rid: unknown,
): GatewayError {
  if (error instanceof GatewayError) return error
  switch (code) {
    case 'NOT_FOUND':
      return new GatewayError(
        404,
        'not_found',
        'Unknown route. See the README for the API (POST /v1/chat/completions, POST /v1/messages, GET /v1/models, GET /v1/usage).',
      )
    case 'PARSE':
      return new GatewayError(
        400,
        'invalid_json',
        'The request body could not be parsed; send valid JSON with Content-Type: application/json.',
      )
    case 'VALIDATION': {
      const e = error as { all?: Array<{ path?: string; message?: string; summary?: string }> }
      const first = e.all?.[0]
      const param = pointerToParam(first?.path ?? '')
      return new GatewayError(
        400,
        'invalid_value',
        `${param ?? 'body'}: ${first?.summary ?? first?.message ?? 'invalid value'}`,
        { param },
      )
    }
  }
  if ((error as Error)?.name === 'AbortError') return abortError(error)
  log.error('unhandled error', { request_id: rid, error: (error as Error)?.stack ?? String(error) })
  return new GatewayError(500, 'internal_error', 'Internal error; it has been logged with this request id.', {
    type: 'api_error',
  })
}

/** The write lock stayed taken past busy_timeout (other processes hammering the file): retry soon. */
export function storeUnavailable(e: unknown): never {
  if (/SQLITE_BUSY|database is locked/i.test(String((e as Error)?.message ?? e))) {
    throw new GatewayError(
      503,
      'store_busy',
      'The gateway is overloaded (its database is busy); retry in a second.',
      {
        type: 'api_error',
        headers: { 'retry-after': '1' },
      },
    )
  }
  throw e
}
