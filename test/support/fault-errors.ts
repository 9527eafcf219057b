/**
 * @module
 * What the fault-injecting upstream (`fault-upstream.ts`) can be scripted to do, and the answers
 * that are an error status: each in the provider's own words (OpenAI's `{"error": {…, code}}`,
 * Anthropic's `{"type": "error", "error": {type, message}}`), with the codes the gateway classifies
 * by (`rate_limit_exceeded`, `insufficient_quota`, `context_length_exceeded`, `content_filter`).
 */
import type { Wire, WireBodies } from './fault-wires.ts'

export type FaultName =
  | 'ok'
  /** 429; `retryAfter` / `retryAfterMs` become the `retry-after` / `retry-after-ms` headers. */
  | 'rate_limited'
  /** OpenAI: 429 `insufficient_quota`; Anthropic: 402 `billing_error`. */
  | 'quota'
  | 'unauthorized'
  | 'forbidden'
  | 'server_error'
  | 'unavailable'
  /** 529, Anthropic's `overloaded_error`. */
  | 'overloaded'
  /** 400 `context_length_exceeded` (Anthropic: `prompt is too long`). */
  | 'context_overflow'
  /** OpenAI wires: 400 `content_filter`; Anthropic: a 200 answer with `stop_reason: refusal`. */
  | 'content_policy'
  /** 400 with no code: the request's own fault. */
  | 'bad_request'
  /** The connection closed before any response byte. */
  | 'reset'
  /** No response at all, until the client gives up. */
  | 'silent'
  /** Stream: the head (role chunk, `message_start`…) at once, then `delayMs` before the first word. JSON: the whole answer after `delayMs`. */
  | 'slow_first_token'
  /** `after` words, then the connection aborted mid-body (no terminal event). */
  | 'cut'
  /** `after` words, then the body ends cleanly without the terminal event. */
  | 'end_early'
  /** `after` words, then nothing for `delayMs` (default: until the client gives up), then the rest. */
  | 'stall'
  /**
   * An event that is not JSON after `after` words (the wire's own, or `frame`); the answer is
   * otherwise complete.
   */
  | 'malformed'
  /** Chat: complete, `finish_reason` and usage sent, but no `data: [DONE]` (other wires: as `ok`). */
  | 'no_done'
  /**
   * Stream, status 200: the head, `after` words (default none), then the provider's in-band
   * out-of-quota failure (chat: an `{"error": …}` chunk; Responses: the recorded `error` and
   * `response.failed` events). Not on the Messages wire: Anthropic has no such event.
   */
  | 'quota_in_stream'
  /**
   * Chat wire, not a stream: status 200 whose JSON body is the out-of-quota error object instead
   * of a completion, as some OpenAI-compatible servers fail. Other wires: a 500 saying so.
   */
  | 'quota_in_body'

export interface Fault {
  fault: FaultName
  retryAfter?: string
  retryAfterMs?: string
  /** Words sent before a cut, stall, malformed event, early end or in-stream failure. */
  after?: number
  delayMs?: number
  /** Words in the answer (default: the server's `words`). */
  words?: number
  /**
   * Chat wire, streams: after its words the answer calls a tool (`TOOL_CALL`: one frame naming it, one per
   * piece of its arguments) and finishes with `tool_calls`; `after` counts those frames too.
   */
  toolCall?: boolean
  /** With `malformed`: this frame (its SSE framing included) in place of the wire's own. */
  frame?: string
}
export type Step = FaultName | Fault

/** What the real providers refuse before any model runs: no credential, no model, a missing required field. */
export function refuse(
  wire: Wire,
  request: Request,
  body: any,
  key: string,
): [number, string, string] | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return [400, 'invalid_request_error', 'The request body must be a JSON object.']
  if (!key)
    return wire === 'messages'
      ? [401, 'authentication_error', 'x-api-key header is required']
      : [401, 'invalid_request_error', "You didn't provide an API key."]
  if (typeof body.model !== 'string' || body.model === '')
    return [400, 'invalid_request_error', 'model: Field required']
  if (wire === 'messages') {
    if (!request.headers.get('anthropic-version'))
      return [400, 'invalid_request_error', 'anthropic-version: header is required']
    if (typeof body.max_tokens !== 'number')
      return [400, 'invalid_request_error', 'max_tokens: Field required']
  }
  if (wire !== 'responses' && (!Array.isArray(body.messages) || body.messages.length === 0))
    return [400, 'invalid_request_error', 'messages: Field required']
  if (wire === 'responses' && body.input === undefined)
    return [400, 'invalid_request_error', 'input: Field required']
  return null
}

export function errorResponse(
  w: WireBodies,
  _wire: Wire,
  status: number,
  type: string,
  message: string,
  code: string | null = null,
  param: string | null = null,
  headers: Record<string, string> = {},
): Response {
  return new Response(w.error(status, type, message, code, param), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })
}

/** The faults answered by an error status, in each wire's own words; null for the rest. */
export function statusFault(w: WireBodies, wire: Wire, f: Fault, model: string): Response | null {
  const anthropic = wire === 'messages'
  const e = (
    status: number,
    type: string,
    message: string,
    code?: string | null,
    param?: string | null,
    h?: Record<string, string>,
  ) => errorResponse(w, wire, status, type, message, code ?? null, param ?? null, h)
  switch (f.fault) {
    case 'rate_limited': {
      const h: Record<string, string> = {}
      if (f.retryAfter !== undefined) h['retry-after'] = f.retryAfter
      if (f.retryAfterMs !== undefined) h['retry-after-ms'] = f.retryAfterMs
      return anthropic
        ? e(
            429,
            'rate_limit_error',
            'This request would exceed the rate limit for your organization of 50 requests per minute.',
            null,
            null,
            h,
          )
        : e(
            429,
            'requests',
            `Rate limit reached for ${model} on requests per min (RPM): Limit 3, Used 3, Requested 1.`,
            'rate_limit_exceeded',
            null,
            h,
          )
    }
    case 'quota':
      return anthropic
        ? e(402, 'billing_error', 'Your credit balance is too low to access the Anthropic API.')
        : e(
            429,
            'insufficient_quota',
            'You exceeded your current quota, please check your plan and billing details.',
            'insufficient_quota',
          )
    case 'quota_in_body':
      if (wire !== 'chat') return new Response(`quota_in_body: not a ${wire} fault`, { status: 500 })
      return errorResponse(
        w,
        wire,
        200,
        'insufficient_quota',
        'You exceeded your current quota, please check your plan and billing details.',
        'insufficient_quota',
      )
    case 'unauthorized':
      return anthropic
        ? e(401, 'authentication_error', 'invalid x-api-key')
        : e(401, 'invalid_request_error', 'Incorrect API key provided.', 'invalid_api_key')
    case 'forbidden':
      return anthropic
        ? e(403, 'permission_error', 'Your API key does not have permission to use the specified resource.')
        : e(
            403,
            'invalid_request_error',
            `Project does not have access to model ${model}.`,
            'model_not_found',
          )
    case 'server_error':
      return anthropic
        ? e(500, 'api_error', 'Internal server error')
        : e(500, 'server_error', 'The server had an error while processing your request. Sorry about that!')
    case 'unavailable':
      return anthropic
        ? e(503, 'api_error', 'Service unavailable')
        : e(503, 'server_error', 'The engine is currently overloaded, please try again later.')
    case 'overloaded':
      return anthropic ? e(529, 'overloaded_error', 'Overloaded') : e(529, 'server_error', 'Overloaded')
    case 'context_overflow':
      return anthropic
        ? e(400, 'invalid_request_error', 'prompt is too long: 215000 tokens > 200000 maximum')
        : e(
            400,
            'invalid_request_error',
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
            'context_length_exceeded',
            wire === 'responses' ? 'input' : 'messages',
          )
    case 'content_policy':
      if (anthropic) return null // answered as Claude refuses: a 200 with stop_reason `refusal`
      return e(
        400,
        'invalid_request_error',
        "The response was filtered due to the prompt triggering the provider's content management policy.",
        'content_filter',
        'prompt',
      )
    case 'bad_request':
      return e(400, 'invalid_request_error', 'Invalid value for temperature.', null, 'temperature')
    default:
      return null
  }
}
