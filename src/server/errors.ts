/**
 * @module
 * Request ids and the one place errors become responses: every refusal — ours, Elysia's
 * validation and parse errors, unknown routes — leaves as OpenAI's error body, or under
 * `/v1/messages` as Anthropic's (DESIGN §6), e.g. for `POST /v1/messages/batches`, and so does
 * `/v1/models` asked with `anthropic-version`. Every response carries `x-request-id`, and those in
 * Anthropic's terms also Anthropic's `request-id` (the same id).
 */
import { Elysia } from 'elysia'
import { toGatewayError } from '../pipeline/errors.ts'
import { geminiErrorResponse } from '../surfaces/gemini/errors.ts'
import { messagesErrorResponse } from '../surfaces/messages/errors.ts'
import { surfaceAt } from '../traffic/surfaces.ts'
import { pathOf, type Traffic } from '../traffic/traffic.ts'
import { errorResponse, GatewayError } from '../util/errors.ts'
import { newRequestId } from '../util/ids.ts'
import { holdsKey } from '../util/key-shape.ts'
import type { Logger } from '../util/log.ts'
import { routeValidationError } from './route-validation.ts'

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * The client's id when it is sane, else the gateway's own. Never a key sent there by mistake: the
 * id is echoed, logged and stored in the request log, which the console shows.
 */
export function requestId(incoming: string | null): string {
  return incoming && INCOMING_ID.test(incoming) && !holdsKey(incoming) ? incoming : newRequestId()
}

/**
 * What every answer carries whatever it holds: `nosniff`, as OpenAI's API sends it, since answers
 * quote what was sent (a model id, an origin) and a sniffing browser must not read one as a page or
 * a script. Elysia starts each request's `set.headers` as a copy of these (instead of an empty
 * object: one object either way), so no hook runs for it, and every response built from
 * `set.headers` carries it: handlers' JSON and streams, errors, a preflight.
 */
const FIXED_HEADERS = { 'x-content-type-options': 'nosniff' }

/** `traffic`: where the refusal's code goes, for the access line (`Exchange.errorCode`). */
export function errorHandling(log: Logger, traffic?: Traffic) {
  return new Elysia({ name: 'switchyard.errors' })
    .headers(FIXED_HEADERS)
    .error({ GatewayError })
    .onRequest(({ request, set }) => {
      const id = requestId(request.headers.get('x-request-id'))
      set.headers['x-request-id'] = id
      // Anthropic names it `request-id`: its SDK reads that header into `_request_id` and an
      // error's `requestID`, Claude Code into its error lines.
      if (anthropicStyle(request)) set.headers['request-id'] = id
    })
    .onError({ as: 'global' }, ({ code, error, set, request }) => {
      // Logged under the gateway's own id (the access line's), which a client's cannot repeat.
      const err =
        code === 'VALIDATION'
          ? routeValidationError(error)
          : (elysiaError(code, error) ??
            toGatewayError(error, 'request', log, traffic?.of(request)?.id ?? set.headers['x-request-id']))
      set.status = err.status // read by the metrics hook
      traffic?.refused(request, err)
      const headers = set.headers as Record<string, string>
      if (googleStyle(request)) return geminiErrorResponse(err, headers)
      return anthropicStyle(request) ? messagesErrorResponse(err, headers) : errorResponse(err, headers)
    })
}

/** Elysia's own refusals: an unknown route (404), a body it could not parse (400). */
function elysiaError(code: string | number, error: unknown): GatewayError | null {
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
  return null
}

/**
 * Answered in Anthropic's terms: the Messages surface, and the models list an Anthropic client
 * reads (it sends `anthropic-version`; `routes/models.ts` answers it in Anthropic's shape).
 */
function anthropicStyle(request: Request): boolean {
  const path = pathOf(request.url)
  if (surfaceAt(path) === 'messages') return true
  return (path === '/v1/models' || path.startsWith('/v1/models/')) && request.headers.has('anthropic-version')
}

/** Answered in Google's terms: the Gemini surface's paths (and its model list, under `/v1beta`). */
function googleStyle(request: Request): boolean {
  const path = pathOf(request.url)
  if (surfaceAt(path) === 'gemini') return true
  if (path.startsWith('/v1beta/')) return true
  return path.startsWith('/v1/models') && request.headers.has('x-goog-api-key')
}
