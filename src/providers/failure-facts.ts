/**
 * @module
 * What an upstream attempt saw when it failed, kept beside the `GatewayError` it became: the
 * upstream's own status (a 503 stays a 503 here even where the client is told 502), the
 * provider's error code or type, its words, its `retry-after`, or the transport fault when there
 * was no status. The attempt loop classifies from these facts, never from the client-facing error.
 *
 * @example
 * throw withFacts(err, { status: 429, code: 'rate_limit_exceeded', retryAfterMs: 2000 })
 * factsOf(e)?.status   // 429
 */
import type { FailureFacts } from './resilience/failure-kinds.ts'

export interface UpstreamFacts extends FailureFacts {
  /** The upstream's `retry-after` / `retry-after-ms`, in ms; null when it sent none. */
  retryAfterMs?: number | null
}

const FACTS = new WeakMap<object, UpstreamFacts>()

/** Attaches `facts` to `err` (the first facts attached win: they are the closest to the wire) and returns it. */
export function withFacts<E extends object>(err: E, facts: UpstreamFacts): E {
  if (!FACTS.has(err)) FACTS.set(err, facts)
  return err
}

export function factsOf(err: unknown): UpstreamFacts | undefined {
  return err !== null && typeof err === 'object' ? FACTS.get(err) : undefined
}

/**
 * The provider's error code from an error body: Google's `ErrorInfo` reason (in `error.details`:
 * `API_KEY_INVALID` says what the 400 `INVALID_ARGUMENT` around it does not), else OpenAI's
 * `error.code`, else Anthropic's `error.type`, else Gemini's `error.status` (kept as sent: the
 * classifier knows them; a code it does not know leaves the kind to the HTTP status).
 */
export function upstreamCode(bodyText: string): string | null {
  let body: unknown
  try {
    body = JSON.parse(bodyText)
  } catch {
    return null
  }
  return errorCodeOf(body)
}

/** `upstreamCode` on a parsed body: an error answer's, or an in-band error event's (`{"error": …}`). */
export function errorCodeOf(body: unknown): string | null {
  if (Array.isArray(body)) body = body[0]
  const e = (body as { error?: unknown } | null)?.error
  if (!e || typeof e !== 'object') return null
  const { code, type, status, details } = e as Record<string, unknown>
  const reason = Array.isArray(details)
    ? details.find((d) => typeof (d as { reason?: unknown } | null)?.reason === 'string')?.reason
    : undefined
  for (const c of [reason, code, type, status]) {
    if (typeof c === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(c)) return c
  }
  return null
}
