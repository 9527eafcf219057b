/**
 * @module
 * What kind of failure an upstream attempt met, decided once, in one place, from what the attempt
 * saw: the upstream's HTTP status, the provider's error code (or type), its message (only for
 * context overflow, which Anthropic and Gemini state in words), or what went wrong on the wire
 * when there was no status. The kind picks the action from `ACTIONS` (DESIGN §10): a table, so
 * the attempt loop asks `ACTIONS[kind]` and never re-reads statuses.
 *
 * The table is for failures the client has not seen. Once content has reached it, every kind is
 * acted on alike (`AFTER_CONTENT`): continue on a target that can take the relayed text as
 * assistant prefill, else end with the surface's in-band error.
 *
 * @example
 * const kind = classify({ status: 429, code: 'insufficient_quota' })   // 'credential'
 * ACTIONS[kind].key                                                   // 'rest_cooldown'
 * classify({ transport: 'no_response' })                               // 'silent'
 */

/** Every failure kind; the one list (metrics and logs name them as written here). */
export const FAILURE_KINDS = [
  'rate_limited',
  'credential',
  'transient',
  'silent',
  /** An answer past `max_response_bytes`: the same target would send it again. */
  'oversized',
  'slow_first_token',
  'request_fault',
  'context_overflow',
  'content_policy',
  /**
   * The gateway's own fault: something it threw while making or reading an attempt (a translator
   * or encoder meeting an answer it cannot handle), not a failure of the upstream.
   */
  'internal',
] as const
export type FailureKind = (typeof FAILURE_KINDS)[number]

/** What went wrong on the wire when no status explains it. */
export type TransportFault =
  /** Connection refused, or reset / closed before any response byte. */
  | 'unreachable'
  /** `first_byte_ms` passed with no response headers. */
  | 'no_response'
  /** `first_token_ms` passed with headers but no content-bearing event. */
  | 'no_first_token'
  /** The body ended, or the socket closed, before the protocol's terminal event. */
  | 'cut'
  /** `idle_ms` passed between two events. */
  | 'stall'
  /** The upstream answered, but not in its own protocol (a malformed body or status line). */
  | 'invalid'

/** What an attempt saw. `status` and `code` come from an error answer or an in-band error event. */
export interface FailureFacts {
  status?: number
  /** The provider's error `code`, or its `type` when it has no code (Anthropic, Gemini `status`). */
  code?: string | null
  message?: string | null
  transport?: TransportFault
  /** The gateway failed, not the upstream (a bug): outranks everything else. */
  gateway?: true
}

/** Provider codes that decide the kind whatever the status (a 429 may be quota, a 200 stream may carry an overload). */
const BY_CODE: Readonly<Record<string, FailureKind>> = {
  // OpenAI
  rate_limit_exceeded: 'rate_limited',
  insufficient_quota: 'credential',
  invalid_api_key: 'credential',
  context_length_exceeded: 'context_overflow',
  content_filter: 'content_policy',
  content_policy_violation: 'content_policy',
  invalid_prompt: 'content_policy',
  server_error: 'transient',
  // Ours: the answer passed max_response_bytes and was cut off (providers/body-limit.ts).
  upstream_response_too_large: 'oversized',
  // Anthropic error types
  rate_limit_error: 'rate_limited',
  authentication_error: 'credential',
  permission_error: 'credential',
  billing_error: 'credential',
  overloaded_error: 'transient',
  api_error: 'transient',
  timeout_error: 'transient',
  request_too_large: 'request_fault',
  // Gemini statuses and reasons
  RESOURCE_EXHAUSTED: 'rate_limited',
  UNAVAILABLE: 'transient',
  INTERNAL: 'transient',
  DEADLINE_EXCEEDED: 'transient',
  PERMISSION_DENIED: 'credential',
  UNAUTHENTICATED: 'credential',
  API_KEY_INVALID: 'credential',
}

/** A 400 / 413 whose words say the prompt is over the model's window (Anthropic and Gemini send no code for it). */
const CONTEXT_OVERFLOW_WORDS =
  /prompt is too long|maximum context length|context (window|length)|too many (input )?tokens|input token count .* exceeds/i

/** The status when no code decided; 5xx not listed here is transient, 4xx not listed the request's fault. */
const BY_STATUS: Readonly<Record<number, FailureKind>> = {
  401: 'credential',
  402: 'credential',
  403: 'credential',
  408: 'transient',
  429: 'rate_limited',
}

const BY_TRANSPORT: Readonly<Record<TransportFault, FailureKind>> = {
  unreachable: 'transient',
  no_response: 'silent',
  no_first_token: 'slow_first_token',
  cut: 'transient',
  stall: 'transient',
  invalid: 'transient',
}

/** The one kind for what an attempt saw. An error status or code outranks the transport. */
export function classify(f: FailureFacts): FailureKind {
  if (f.gateway) return 'internal'
  const byCode = f.code ? BY_CODE[f.code] : undefined
  if (byCode) return byCode
  const s = f.status
  if (s !== undefined && s >= 400) {
    if ((s === 400 || s === 413) && f.message && CONTEXT_OVERFLOW_WORDS.test(f.message))
      return 'context_overflow'
    return BY_STATUS[s] ?? (s >= 500 ? 'transient' : 'request_fault')
  }
  return f.transport ? BY_TRANSPORT[f.transport] : 'transient'
}

/** What to do about one failure the client has not seen. */
export interface Action {
  /**
   * Try the same target again: `backoff` after a jittered wait (up to `retry.attempts`);
   * `retry_after` after the upstream's `retry-after` when it is within `max_retry_after_s`
   * (a backoff when it sent none), on another key of the pool at once if one is free.
   */
  retry: 'none' | 'backoff' | 'retry_after'
  /** The key that failed: rests until its `retry-after` passes, rests `circuit.cooldown_s`, or is kept. */
  key: 'keep' | 'rest_retry_after' | 'rest_cooldown'
  /** Another key of the same provider may take the same model at once. */
  nextKey: boolean
  /**
   * When retries are spent: go to the next fallback (`always`), only to one with a larger context
   * window (`larger_context`), only to one of another provider kind (`other_kind`: another wire,
   * read by other code), never (the answer goes to the client as the provider gave it).
   */
  failover: 'always' | 'larger_context' | 'other_kind' | 'never'
  /** With no fallback left: `wait` on this target still (a slow reasoning model is not an error), or `fail`. */
  lastResort: 'fail' | 'wait'
  /** This target is not tried again for this request (a silent one is never waited on twice). */
  skipForRequest: boolean
  /** For the (key, model) circuit: a failure of the target, a sign it is up, or neither. */
  circuit: 'failure' | 'alive' | 'none'
}

/**
 * DESIGN §10's "the request's own fault": never retried, never failed over; the target answered,
 * so its circuit counts it alive. Context overflow and content-policy refusals are such faults.
 */
const THE_REQUESTS_FAULT: Readonly<Action> = {
  retry: 'none',
  key: 'keep',
  nextKey: false,
  failover: 'never',
  lastResort: 'fail',
  skipForRequest: false,
  circuit: 'alive',
}

/** DESIGN §10's silent target: fail over at once, never wait on it again for this request. */
const SKIP_TARGET: Readonly<Action> = {
  retry: 'none',
  key: 'keep',
  nextKey: false,
  failover: 'always',
  lastResort: 'fail',
  skipForRequest: true,
  circuit: 'failure',
}

/** DESIGN §10, one row per kind. */
export const ACTIONS: Readonly<Record<FailureKind, Readonly<Action>>> = {
  rate_limited: {
    retry: 'retry_after',
    key: 'rest_retry_after',
    nextKey: true,
    failover: 'always',
    lastResort: 'fail',
    skipForRequest: false,
    circuit: 'none',
  },
  credential: {
    retry: 'none',
    key: 'rest_cooldown',
    nextKey: true,
    failover: 'always',
    lastResort: 'fail',
    skipForRequest: false,
    circuit: 'none',
  },
  transient: {
    retry: 'backoff',
    key: 'keep',
    nextKey: false,
    failover: 'always',
    lastResort: 'fail',
    skipForRequest: false,
    circuit: 'failure',
  },
  silent: SKIP_TARGET,
  // Asking the same target again would read up to max_response_bytes again (a hostile or broken
  // upstream tripled the gateway's work); the target did answer, so its circuit is not touched.
  oversized: { ...SKIP_TARGET, circuit: 'none' },
  // A slow reasoning model is not an error: with no fallback left, keep waiting.
  slow_first_token: { ...SKIP_TARGET, lastResort: 'wait', circuit: 'none' },
  request_fault: THE_REQUESTS_FAULT,
  // Fails over only to a fallback whose context window is larger.
  context_overflow: { ...THE_REQUESTS_FAULT, failover: 'larger_context', skipForRequest: true },
  // Returned as the provider gave it.
  content_policy: THE_REQUESTS_FAULT,
  // The gateway's bug, not the upstream's failure: another key or another model of the same
  // provider kind goes through the same code and would fail the same way, so neither is tried; a
  // fallback of another kind is read by other code and may answer. The upstream answered, so its
  // circuit is not touched (one account's request must not pause the model for everyone).
  internal: { ...SKIP_TARGET, failover: 'other_kind', circuit: 'none' },
}

/**
 * After content reached the client (a cut, a stall, an in-band error): no retry of the same
 * target (it would repeat the text), at most one switch to a target that continues from the
 * relayed text, else the surface's in-band error. The kind still feeds the circuit and key rests.
 */
export const AFTER_CONTENT = {
  switches: 1,
  needs: 'prefill',
  otherwise: 'in_band_error',
} as const
