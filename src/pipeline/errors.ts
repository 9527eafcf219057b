/**
 * @module
 * The one converter from whatever was thrown to a `GatewayError`, for every surface (each renders
 * it in its own shape). Unknown errors become a 500 that hides internals and is logged.
 */
import { abortError } from '../providers/http.ts'
import { GatewayError, pointerToParam } from '../util/errors.ts'
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
    case 'VALIDATION': {
      const e = error as {
        all?: Array<{ path?: string; message?: string; summary?: string; schema?: Bounded; value?: unknown }>
      }
      const first = e.all?.[0]
      const param = pointerToParam(first?.path ?? '')
      const range = first && numberRange(first.schema)
      return new GatewayError(
        400,
        'invalid_value',
        range
          ? `${param ?? 'body'}: must be ${range}; got ${JSON.stringify(first.value) ?? 'nothing'}.`
          : `${param ?? 'body'}: ${first?.summary ?? first?.message ?? 'invalid value'}`,
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

/** A schema as far as a number's bounds go (Elysia's `t.Integer` is a union with its numeric string). */
interface Bounded {
  type?: string
  minimum?: number
  maximum?: number
  anyOf?: Bounded[]
}

/** "an integer from 1 to 36500" for a bounded number's schema, else null (the validator's words do). */
function numberRange(schema: Bounded | undefined): string | null {
  const s = schema?.anyOf?.find((m) => m.type === 'integer' || m.type === 'number') ?? schema
  if (!s || (s.type !== 'integer' && s.type !== 'number')) return null
  const kind = s.type === 'integer' ? 'an integer' : 'a number'
  if (s.minimum !== undefined && s.maximum !== undefined) return `${kind} from ${s.minimum} to ${s.maximum}`
  if (s.minimum !== undefined) return `${kind} of at least ${s.minimum}`
  if (s.maximum !== undefined) return `${kind} of at most ${s.maximum}`
  return kind
}
