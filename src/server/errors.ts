/**
 * @module
 * Request ids and the one place errors become responses: every refusal — ours, Elysia's
 * validation and parse errors, unknown routes — leaves as OpenAI's error body.
 */
import { Elysia } from 'elysia'
import { type ErrorBody, GatewayError, pointerToParam } from '../util/errors.ts'
import type { Logger } from '../util/log.ts'
import { storeFailure } from './store-errors.ts'

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function requestId(incoming: string | null): string {
  return incoming && INCOMING_ID.test(incoming) ? incoming : `req_${crypto.randomUUID().replaceAll('-', '')}`
}

export function errorResponse(err: GatewayError, headers: Record<string, string | number> = {}): Response {
  const h = new Headers()
  for (const [k, v] of Object.entries(headers)) h.set(k, String(v))
  h.set('content-type', 'application/json')
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) h.set(k, v)
  return new Response(JSON.stringify(err.toBody() satisfies ErrorBody), { status: err.status, headers: h })
}

/** Turns whatever was thrown into a GatewayError; unknown errors become a 500 that hides internals. */
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
        'Unknown route. See the README for the API (POST /v1/chat/completions, GET /v1/models, GET /v1/usage).',
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
  log.error('unhandled error', { request_id: rid, error: (error as Error)?.stack ?? String(error) })
  return new GatewayError(500, 'internal_error', 'Internal error; it has been logged with this request id.', {
    type: 'api_error',
  })
}

export function errorHandling(log: Logger) {
  return new Elysia({ name: 'switchyard.errors' })
    .error({ GatewayError })
    .onRequest(({ request, set }) => {
      set.headers['x-request-id'] = requestId(request.headers.get('x-request-id'))
    })
    .onError({ as: 'global' }, ({ code, error, set }) => {
      const err = toGatewayError(code, error, log, set.headers['x-request-id'])
      set.status = err.status // read by the metrics hook
      return errorResponse(err, set.headers as Record<string, string>)
    })
}
