/**
 * @module
 * Upstream plumbing every adapter shares: `fetch` with the provider's timeouts and the client's
 * abort signal, bounded body reads (a gated answer's idle / total timeouts: pipeline/gated-read.ts). Failures become
 * `GatewayError`s (see `upstream-errors.ts`, re-exported here) that name the provider by its
 * prefix and never contain its API key.
 */
import type { ProviderConfig } from '../config/schema.ts'
import { GatewayError } from '../util/errors.ts'
import { maxResponseBytes, readCappedText } from './body-limit.ts'
import { upstreamCode, withFacts } from './failure-facts.ts'
import { retryAfterMs } from './resilience/retry-wait.ts'
import { scrubbed } from './scrub.ts'
import type { CallContext, Timeouts } from './types.ts'
import {
  abortError,
  describeNetworkError,
  fromTheWire,
  gatewayFault,
  invalidResponse,
  MAX_RETRY_AFTER_S,
  networkErrorDetail,
  sanitizeMessage,
  streamInterrupted,
  unreachableError,
} from './upstream-errors.ts'

export {
  abortError,
  clampRetryAfter,
  describeUpstreamError,
  fromTheWire,
  gatewayFault,
  inBandError,
  invalidResponse,
  networkErrorDetail,
  openAIStyleError,
  type ServerFault,
  sanitizeMessage,
  serverFaultOf,
  streamInterrupted,
} from './upstream-errors.ts'

export const DEFAULT_TIMEOUTS: Readonly<Timeouts> = Object.freeze({
  firstByteMs: 120_000,
  idleMs: 120_000,
  totalMs: 600_000,
})

/** A demo answer is made at once: a stream still open after this holds a client that stopped reading. */
export const DEMO_TOTAL_MS = 30_000

/** The provider's `timeouts` block over the defaults. */
export function resolveTimeouts(provider: ProviderConfig): Timeouts {
  const t = provider.timeouts
  return {
    firstByteMs: t?.first_byte_ms ?? DEFAULT_TIMEOUTS.firstByteMs,
    idleMs: t?.idle_ms ?? DEFAULT_TIMEOUTS.idleMs,
    totalMs: t?.total_ms ?? (provider.kind === 'demo' ? DEMO_TOTAL_MS : DEFAULT_TIMEOUTS.totalMs),
  }
}

/**
 * Stream defaults, tighter than a whole answer's (DESIGN §10): a stream's headers and events
 * come at once while a model works, so 30 s of silence means a silent or stalled upstream. A
 * non-stream answer's headers may wait for the whole answer: it keeps `DEFAULT_TIMEOUTS`.
 */
export const DEFAULT_STREAM_TIMEOUTS: Readonly<Required<Timeouts>> = Object.freeze({
  firstByteMs: 30_000,
  firstTokenMs: 30_000,
  idleMs: 30_000,
  totalMs: 600_000,
})

/** The provider's `timeouts` block over the stream defaults. */
export function resolveStreamTimeouts(provider: ProviderConfig): Required<Timeouts> {
  const t = provider.timeouts
  const d = DEFAULT_STREAM_TIMEOUTS
  return {
    firstByteMs: t?.first_byte_ms ?? d.firstByteMs,
    firstTokenMs: t?.first_token_ms ?? d.firstTokenMs,
    idleMs: t?.idle_ms ?? d.idleMs,
    totalMs: t?.total_ms ?? d.totalMs,
  }
}

/** One signal that aborts when any of the given ones does (with that one's reason). */
export function mergeSignals(...signals: Array<AbortSignal | undefined | null>): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s != null)
  return present.length === 1 ? present[0]! : AbortSignal.any(present)
}

/**
 * `fetch` for upstream calls. Until the response headers arrive it is bounded by
 * `min(firstByteMs, totalMs)`; `ctx.signal` stays attached, so a client that leaves later still
 * aborts the body. Failures become `GatewayError`s: unreachable → 502 `upstream_unreachable`,
 * timeout → 504 `upstream_timeout`, client gone → 499 `client_closed_request`, and a non-2xx
 * answer → `mapError(status, body)` (with the upstream's `retry-after` kept on a 429, at most
 * an hour). No message names the upstream's address: Bun's own texts, which carry the URL, go
 * to `GatewayError.detail` (logged with the request id, never sent).
 *
 * @example
 * const res = await upstreamFetch(url, { method: 'POST', headers, body }, ctx,
 *   (status, text) => openAIStyleError(status, text, ctx.provider.prefix))
 */
/** The request's headers and the attempt's `traceparent` (a client's own is replaced: this attempt is its child). */
function withTraceparent(headers: RequestInit['headers'], traceparent: string): RequestInit['headers'] {
  // The adapters pass a plain record: a copy with one more field costs less than a `Headers`.
  // One spread, the client's `traceparent` (if any) overwritten in it (a rest pattern that left it
  // out cost ~0.3–0.7 µs more: JSC copies with an exclusion set).
  if (headers && !(headers instanceof Headers) && !Array.isArray(headers))
    return { ...(headers as Record<string, string>), traceparent }
  const h = new Headers(headers)
  h.set('traceparent', traceparent)
  return h
}

export async function upstreamFetch(
  url: string,
  init: RequestInit,
  ctx: CallContext,
  mapError: (status: number, bodyText: string) => GatewayError,
): Promise<Response> {
  const label = ctx.provider.prefix
  const ms = Math.min(ctx.timeouts.firstByteMs, ctx.timeouts.totalMs)
  let timedOut: GatewayError | null = null
  // With `ctx.cancel` the timeout aborts the request's own signal: no controller, no merged signal.
  const own = ctx.cancel ? null : new AbortController()
  const onTimeout = (): void => {
    timedOut = new GatewayError(
      504,
      'upstream_timeout',
      `Upstream '${label}' did not answer within ${ms} ms.`,
    )
    if (own) own.abort(timedOut)
    else ctx.cancel!(timedOut)
  }
  const deadline = ctx.deadline
  let timeout: ReturnType<typeof setTimeout> | undefined
  if (deadline) deadline.own(onTimeout).at(deadline.scheduler.now() + ms)
  else timeout = setTimeout(onTimeout, ms)
  try {
    let res: Response
    try {
      // redirect: manual: the provider's key goes to its base_url and nowhere else. Bun drops
      // `authorization` on a cross-origin redirect but forwards `x-api-key` and `x-goog-api-key`.
      res = await fetch(url, {
        ...init,
        headers: ctx.traceparent ? withTraceparent(init.headers, ctx.traceparent) : init.headers,
        redirect: 'manual',
        // The request's signal alone when nothing is added to it (the usual case: `ctx.cancel`):
        // not a rest array and a filtered copy of it a call.
        signal: own || init.signal ? mergeSignals(ctx.signal, own?.signal, init.signal) : ctx.signal,
      })
    } catch (err) {
      if (timedOut) throw withFacts(timedOut, { transport: 'no_response' })
      if (ctx.signal.aborted) throw abortError(ctx.signal.reason)
      const unreachable = unreachableError(label, err, ctx.provider.api_key)
      throw withFacts(unreachable, {
        transport: unreachable.code === 'upstream_unreachable' ? 'unreachable' : 'invalid',
      })
    }
    if (res.ok) {
      // What aborts this fetch stays reachable from its response: it is how `readText` cuts a
      // body it reads natively.
      ;(res as Cuttable)[CUT] = own ? (reason) => own.abort(reason) : ctx.cancel!
      return res
    }
    if (res.status >= 300 && res.status < 400) {
      void res.body?.cancel().catch(() => {})
      throw withFacts(redirected(label, res.status, res.headers.get('location')), {
        transport: 'invalid',
      })
    }
    // The error body is read under the same first-byte timer (it belongs to the refusal), capped.
    const text = await readCappedText(
      res.body,
      res.headers,
      maxResponseBytes(ctx.provider),
      label,
      'an error body',
    ).catch((e) => {
      if (e instanceof GatewayError && e.code === 'upstream_response_too_large') throw e
      return ''
    })
    let err = mapError(res.status, text)
    // The upstream's wait: its headers', else what the mapper read from the body (Gemini's
    // `RetryInfo.retryDelay`), so the attempt loop honours it as it would a header.
    const waitMs =
      retryAfterMs(res.headers, Date.now()) ??
      retryAfterMs({ get: (name) => err.headers?.[name] ?? null }, Date.now())
    // The upstream's wait goes on to the client of a 429 or a 503 (529), whichever header said it
    // (`retry-after-ms`, as OpenAI sends it, becomes whole seconds), unless the mapper set one.
    if ((err.status === 429 || err.status === 503) && waitMs !== null && !err.headers?.['retry-after']) {
      err = new GatewayError(err.status, err.code, err.message, {
        param: err.param,
        type: err.type,
        headers: {
          ...err.headers,
          'retry-after': String(Math.min(MAX_RETRY_AFTER_S, Math.ceil(waitMs / 1000))),
        },
        detail: err.detail,
      })
    }
    // The upstream's own words decide the failure kind (a 503 is mapped to 502 for some clients).
    throw withFacts(scrubbed(err, ctx.provider), {
      status: res.status,
      code: upstreamCode(text),
      message: text.slice(0, 2000),
      retryAfterMs: waitMs,
    })
  } finally {
    if (deadline) deadline.cancel()
    else clearTimeout(timeout)
  }
}

/** `body` POSTed as JSON with `headers` (the provider's, `content-type` set): `upstreamFetch`. */
export function postJson(
  url: string,
  headers: Headers,
  body: unknown,
  ctx: CallContext,
  mapError: (status: number, bodyText: string) => GatewayError,
): Promise<Response> {
  return upstreamFetch(url, { method: 'POST', headers, body: JSON.stringify(body) }, ctx, mapError)
}

/**
 * 502 `upstream_redirect`: the gateway follows no redirect (the key would go with it). The
 * Location goes to the log only, like every upstream address.
 */
function redirected(label: string, status: number, location: string | null): GatewayError {
  return new GatewayError(
    502,
    'upstream_redirect',
    `Upstream '${label}' answered with a redirect (HTTP ${status}), which the gateway does not follow: the provider's key goes only to its base_url. The operator must set base_url to the address the provider answers at.`,
    { detail: location === null ? undefined : `location: ${location}` },
  )
}

/**
 * Declared, uncompressed bodies up to this size are read by Bun in one native call (`Response.text()`) under a
 * single timer of `min(idleMs, totalMs)` from the headers: a body this small that takes longer
 * than the idle timeout to arrive is stalled in practice. Larger or undeclared (chunked) bodies
 * are read piece by piece, with the idle timeout per piece.
 */
const NATIVE_READ_MAX = 1024 * 1024

/**
 * On the responses `upstreamFetch` returns: aborts that fetch, body included, so a native body
 * read rejects with `reason` (a body read cannot be cancelled any other way once Bun owns it).
 */
const CUT = Symbol('switchyard.cutUpstream')
type Cuttable = Response & { [CUT]?: (reason: GatewayError) => void }

/**
 * Reads a whole body under the idle and total timeouts and `max_response_bytes`: a body cut off →
 * 502 `upstream_invalid_response`; too large → 502 `upstream_response_too_large`, the rest unread;
 * too slow → 504 `upstream_timeout`; the client gone → 499.
 */
export async function readText(res: Response, ctx: CallContext): Promise<string> {
  const label = ctx.provider.prefix
  const limit = ctx.maxResponseBytes ?? maxResponseBytes(ctx.provider)
  try {
    const cut = (res as Cuttable)[CUT]
    const declared = res.headers.get('content-length')
    // A compressed body's declared length is not what it decodes to: counted while it is read.
    const encoding = res.headers.get('content-encoding')
    const plain = encoding === null || encoding === 'identity'
    // Not `res.body`: the getter makes a ReadableStream and its native source that `text()` does
    // not need; a declared body of none reads empty.
    if (cut && plain && declared !== null && Number(declared) <= Math.min(limit, NATIVE_READ_MAX)) {
      // Inline, not a helper's `async`: one promise, generator and frame fewer a request.
      const ms = Math.min(ctx.timeouts.idleMs, totalLeft(ctx))
      const onTimeout = (): void =>
        cut(
          new GatewayError(
            504,
            'upstream_timeout',
            `Upstream '${label}' did not send its body within ${ms} ms.`,
          ),
        )
      // The request's one timer when it has one (upstreamFetch is done with it), else a timer of its own.
      const deadline = ctx.deadline
      const timer = deadline ? undefined : setTimeout(onTimeout, ms)
      deadline?.own(onTimeout).at(deadline.scheduler.now() + ms)
      try {
        return await res.text()
      } finally {
        if (deadline) deadline.cancel()
        else clearTimeout(timer)
      }
    }
    return await readCappedText(res.body, res.headers, limit, label, 'a response body', {
      idleMs: ctx.timeouts.idleMs,
      totalMs: totalLeft(ctx),
      idleError: () => idleTimeout(ctx),
      totalError: () => totalTimeout(ctx),
    })
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'upstream_timeout')
      throw withFacts(err, { transport: 'stall' })
    if (err instanceof GatewayError && err.code !== 'upstream_stream_interrupted') throw err
    if (ctx.signal.aborted) throw abortError(ctx.signal.reason)
    throw withFacts(invalidResponse(label, 'the response body was cut off'), { transport: 'cut' })
  }
}

/**
 * What is left of `total_ms` for the attempt: it counts from the attempt's start (its deadline's),
 * the wait for the headers included, not from when the body began; all of it without a deadline.
 */
export function totalLeft(ctx: CallContext): number {
  const { totalMs } = ctx.timeouts
  const d = ctx.deadline
  return d ? Math.max(0, d.startedAt + totalMs - d.scheduler.now()) : totalMs
}

/**
 * A 2xx whose body is one JSON document, not the event stream asked for: an upstream that ignored
 * `stream` (or an error in disguise), read as the events it stands for where a wire can.
 */
export function isJsonAnswer(res: Response): boolean {
  return (res.headers.get('content-type') ?? '').includes('application/json')
}

/** `readText`, parsed: a body that is not JSON → 502 `upstream_invalid_response`. */
export async function readJson(res: Response, ctx: CallContext): Promise<unknown> {
  const text = await readText(res, ctx)
  try {
    return JSON.parse(text)
  } catch {
    throw scrubbed(
      invalidResponse(ctx.provider.prefix, `the body is not JSON: ${sanitizeMessage(text, 120)}`),
      ctx.provider,
    )
  }
}

export function idleTimeout(ctx: CallContext): GatewayError {
  const { idleMs } = ctx.timeouts
  return new GatewayError(
    504,
    'upstream_timeout',
    `Upstream '${ctx.provider.prefix}' sent nothing for ${idleMs} ms.`,
  )
}

export function totalTimeout(ctx: CallContext): GatewayError {
  const { totalMs } = ctx.timeouts
  return new GatewayError(
    504,
    'upstream_timeout',
    `Upstream '${ctx.provider.prefix}' did not finish within ${totalMs} ms.`,
  )
}

/**
 * A failed read of an upstream body, as the client should hear of it. The read runs the stream's
 * decoders too: what one of them throws is the gateway's fault, not the upstream's.
 */
export function streamReadError(err: unknown, ctx: CallContext): GatewayError {
  if (err instanceof GatewayError) return err
  if (ctx.signal.aborted) return abortError(ctx.signal.reason)
  if (!fromTheWire(err)) return gatewayFault(err)
  return streamInterrupted(
    ctx.provider.prefix,
    describeNetworkError(err),
    networkErrorDetail(err, ctx.provider.api_key),
  )
}
