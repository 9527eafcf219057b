/**
 * @module
 * The provider call and the surface encode, for both routes a request can take:
 *
 * | route     | JSON                                              | stream                                             |
 * |-----------|---------------------------------------------------|----------------------------------------------------|
 * | translate | `adapter.complete` → `surface.encodeCompletion`   | `adapter.stream` (a plan) → `surface.streamEncoder` |
 * | forward   | `adapter.forward` → `forward.relayJson` (bytes)   | `adapter.forward` → `forward.relay` (bytes)         |
 *
 * Under a token or money limit a forwarded call (the surface can cut it: `Forwarding.cut`) has
 * its events framed one by one for the gate before its relay, and a JSON one is streamed
 * (`forward.streamed`), cut and assembled (`forward.assemble`): pipeline/output-cut.ts — unless
 * its model does not stream (no gate: operations/chat.ts). An upstream that answers one whole JSON
 * body where events were asked for is read as the events it stands for (`Forwarding.events`,
 * `eventsOf`), cut like any stream; a stream request to a model without `streaming` (a fallback)
 * is asked `adapter.complete` and served from its answer (`wholePlan`).
 *
 * `finish` is called at most once per call: on success, or after a stream was committed to.
 * A failure before the client saw anything is returned instead, for the attempt loop to retry
 * or `settle` (pipeline/attempts.ts). What a call is given and returns: pipeline/call-types.ts.
 */

import { flatText } from '../json/spliced.ts'
import type { ChatCompletion, ChatCompletionChunk } from '../operations/chat.ts'
import { maxResponseBytes } from '../providers/body-limit.ts'
import { abortError, invalidResponse, isJsonAnswer, readJson, readText } from '../providers/http.ts'
import { OpenAIChunkDecoder } from '../providers/openai/stream.ts'
import { scrubbed } from '../providers/scrub.ts'
import { completionEvents } from '../providers/shared/completion-events.ts'
import { eventFrames } from '../providers/sse/event-frames.ts'
import { type StreamPlan, upstreamPlan } from '../providers/stream-plan.ts'
import type { CallContext, ProviderAdapter } from '../providers/types.ts'
import { disconnectedUsage } from '../usage/estimate.ts'
import { GatewayError } from '../util/errors.ts'
import type { CallResult, Finish, ProviderCall, Unaccounted } from './call-types.ts'
import { summed } from './continuation.ts'
import { toGatewayError } from './errors.ts'
import { gatedItems, releaseReads } from './gated-read.ts'
import { type ChunkGate, completeWithin } from './output-cut.ts'
import type { StreamEncoder, StreamOutcome } from './stream/encoder.ts'
import type { CutGate, OutputGate, StreamSource } from './stream/types.ts'
import { writeStream } from './stream/writer.ts'
import type { Forwarding, ForwardRequest } from './surface.ts'

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
}

/**
 * A failed attempt's result. Every failure leaving an attempt, before or after content, loses the
 * provider's key and address (its own words may name them: an in-band error event, a 200 whose
 * body is an error). A function of its own, not closures made on every attempt that succeeds.
 */
function failedAttempt(e: unknown, provider: CallContext['provider'], finish: Finish): CallResult {
  const error = scrubbed(toGatewayError(e, 'upstream'), provider)
  return { ok: false, error, settle: () => finish(error.status, null, error, null) }
}

export async function callProvider<View>(p: ProviderCall<View>): Promise<CallResult> {
  const { adapter, ctx, finish, call } = p
  if (!p.stream) {
    // Nothing of a JSON attempt reaches the client unless it succeeds: what its gate counted into
    // the request's allowance is given back when it fails, so its retry or fallback starts where
    // this one did and no cut settles to its text (OutputAllowance.mark).
    const giveBack = p.gate?.mark()
    try {
      if ('request' in call) {
        const gate = p.gate as ChunkGate | undefined
        const res = gate
          ? await completeWithin(await adapter.stream({ ...call.request, stream: true }, ctx), gate)
          : await adapter.complete(call.request, ctx)
        res.model = p.encodeCtx.modelId
        // Cut at the allowance, or no usage from the upstream: settled to what was generated.
        if (gate && (gate.cut || !res.usage))
          finish(200, res.usage ?? null, null, null, {
            relayedBytes: 0,
            relayedTokens: gate.counted,
            seen: gate.cut ? null : (res.usage ?? null),
            aborted: false,
            started: true,
          })
        else finish(200, res.usage ?? null, null, null)
        return { ok: true, response: json(p.surface.encodeCompletion(res, p.encodeCtx), p.headers) }
      }
      const { relay } = call
      const gate = p.gate as CutGate<Uint8Array> | undefined
      if (gate) {
        // Under a limit a JSON answer is streamed, cut at the allowance and assembled (output-cut.ts).
        // Asked as a stream in the forwarding's own edit of the body, or edited again here.
        let streamed = call.forward
        if (!streamed.streamed) {
          // A forwarding without `streamed` asks for the stream in its own edit, always.
          if (!relay.streamed) throw new Error(`invariant: ${relay.kind} forwarding asked no stream`)
          const asked = relay.streamed(flatText(streamed.body), streamed.path)
          streamed = { ...streamed, ...(typeof asked === 'string' ? { body: asked } : asked) }
          call.forward.body = '' // the streamed copy replaces it (see `forwardCall`)
        }
        const upstream = await eventsOf(await forwardCall(adapter, streamed, ctx), relay, ctx)
        if (!upstream.body) throw invalidResponse(ctx.provider.prefix, 'the stream has no body')
        // Its events (one an item, or a read's an item: `cutsReads`) as the gate let them through
        // (its ending in place of the refused one), read under the provider's timeouts and
        // `max_response_bytes`, as a JSON answer is.
        const max = maxResponseBytes(ctx.provider)
        const frames = [eventFrames(max, ctx.provider.prefix, relay.cutsReads === true)]
        const reads: Uint8Array[] = []
        const events = await gatedItems({ body: upstream.body, stages: frames, ctx }, gate, max, reads)
        let out: ReturnType<typeof relay.assemble>
        try {
          out = relay.assemble(events, p.encodeCtx)
        } finally {
          // The events are views of the reads: done with now (the answer is a string; what
          // `assemble` throws holds no view).
          releaseReads(reads)
        }
        if (gate.cut || !out.usage)
          finish(200, out.usage, null, null, {
            relayedBytes: 0,
            relayedTokens: gate.counted,
            seen: gate.cut ? null : out.usage,
            aborted: false,
            started: true,
          })
        else finish(200, out.usage, null, null)
        return { ok: true, response: json(out.body, p.headers, true) }
      }
      return await relayedJson(p, relay, await forwardCall(adapter, call.forward, ctx))
    } catch (e) {
      giveBack?.()
      return failedAttempt(e, ctx.provider, finish)
    }
  }

  let source: StreamSource<unknown>
  let encoder: StreamEncoder<unknown>
  try {
    if ('request' in call) {
      const req = call.request
      const chunks = p.whole
        ? wholePlan(await adapter.complete(req, ctx), ctx)
        : await adapter.stream(req, ctx)
      source = p.rescue ? p.rescue.tap(chunks) : chunks
      encoder = p.surface.streamEncoder(p.encodeCtx) as StreamEncoder<unknown>
    } else {
      const upstream = await eventsOf(await forwardCall(adapter, call.forward, ctx), call.relay, ctx)
      if (!upstream.body)
        throw new GatewayError(502, 'upstream_invalid_response', 'The upstream stream has no body.')
      // Under a limit its plan frames the events for the gate (`framed`).
      const made = call.relay.relay(upstream, ctx, p.encodeCtx, p.gate !== undefined)
      const relayed = made instanceof Promise ? await made : made
      source = relayed.plan
      encoder = relayed.encoder as StreamEncoder<unknown>
    }
  } catch (e) {
    return failedAttempt(e, ctx.provider, finish)
  }
  const { metrics, config } = p.deps
  let attemptEnded!: (failure: GatewayError | null) => void
  const ended = new Promise<GatewayError | null>((resolve) => {
    attemptEnded = resolve
  })
  const continueWith = p.rescue && 'request' in call ? p.rescue.continueWith.bind(p.rescue) : undefined
  metrics.streamOpened()
  // Until the writer commits to a 200, an ending is the caller's to record (it may try again).
  let committed = false
  let held: StreamOutcome | null = null
  const onFinish = (r: StreamOutcome): void => {
    const status = r.error ? r.error.status : r.aborted ? 499 : 200
    // Most of the answer may have reached the client — it left, or the upstream failed after
    // content without reporting usage: record it, estimated (usage/estimate.ts), never as nothing.
    const cutShort = r.aborted || (r.error !== null && r.relayedBytes > 0 && !r.usage)
    const own = cutShort
      ? disconnectedUsage(
          r.usage,
          r.relayedBytes,
          p.surface.body?.(p.encodeCtx.view, [p.ctx]) ?? p.encodeCtx.view,
        )
      : r.usage
    // A continuation's usage chunk counts the first part too (Continuation.tap); else it is added.
    const uncounted = p.rescue?.uncounted() ?? null
    const usage = summed(own, uncounted)
    const err = r.error ?? (r.aborted ? abortError(undefined) : null)
    // The usage is the whole answer's on a stream that ended as it should with the upstream's
    // count — of a continued stream, both parts' (the first as it was counted when continued).
    // A cut at the allowance: its usage is the gate's count, settled as counted (never the upstream's).
    const gate = p.gate
    const whole = !r.aborted && !r.error && r.usage && !uncounted && !gate?.cut
    const unaccounted: Unaccounted | undefined = whole
      ? undefined
      : {
          relayedBytes: r.relayedBytes,
          seen: gate?.cut ? null : summed(r.usage, uncounted),
          aborted: r.aborted,
          started: r.started,
        }
    if (unaccounted && gate) {
      unaccounted.relayedTokens = gate.counted
      unaccounted.inputTokens = gate.input
    }
    finish(status, usage, err, r.ttftMs, unaccounted)
  }
  const out = await writeStream(source, encoder, {
    // The time to first token counts from this attempt's upstream call, not from its headers.
    startedAt: ctx.deadline?.startedAt,
    keepaliveMs: config.server.streamKeepaliveMs,
    scrub: (e: GatewayError) => scrubbed(e, ctx.provider),
    holdMs: config.server.streamHoldMs,
    signal: p.signal,
    stop: p.deps.traffic.stopSignal,
    holdForContent: true,
    gate: p.gate as OutputGate<unknown> | undefined,
    continueWith: continueWith
      ? (err: GatewayError) => {
          // This attempt's part ends here, failed; the continuation is an attempt of its own.
          attemptEnded(err)
          return continueWith(err) as Promise<StreamSource<unknown> | null>
        }
      : undefined,
    firstToken: { ms: ctx.timeouts.firstTokenMs ?? ctx.timeouts.idleMs, failOver: p.hasFallback === true },
    onFinish: (r) => {
      metrics.streamClosed()
      if (r.malformed) metrics.malformedEvents(ctx.provider.prefix, r.malformed)
      if (committed) {
        const failure = r.aborted ? null : r.error
        attemptEnded(failure)
        p.rescue?.ended(failure)
        onFinish(r)
      } else held = r
    },
  })
  if (out.status === 'error') {
    const outcome = held as StreamOutcome | null
    const settle = () => (outcome ? onFinish(outcome) : finish(out.error.status, null, out.error, null))
    return { ok: false, error: out.error, settle }
  }
  committed = true
  // A wire that streams other than by SSE (Gemini's JSON array without `alt=sse`) says its type.
  const type = encoder.contentType ? { 'content-type': encoder.contentType } : null
  const response = new Response(out.body, { status: 200, headers: { ...p.headers, ...SSE_HEADERS, ...type } })
  return { ok: true, response, ended }
}

/** A whole completion as the stream plan it stands for: its events, read as an OpenAI stream's. */
export function wholePlan(c: ChatCompletion, ctx: CallContext): StreamPlan<ChatCompletionChunk> {
  return upstreamPlan(
    completionEvents(c, ctx.cutWithin),
    ctx,
    new OpenAIChunkDecoder(ctx.provider.prefix, ctx.onMalformed),
  )
}

const SSE = { 'content-type': 'text/event-stream' }

/**
 * The upstream's answer to a request for events: as it came, or — a whole JSON answer from an
 * upstream that ignored `stream` — the events it stands for (`Forwarding.events`), read by the
 * relay and the gate as any stream's.
 */
async function eventsOf<View>(
  upstream: Response,
  relay: Forwarding<View>,
  ctx: CallContext,
): Promise<Response> {
  if (!isJsonAnswer(upstream)) return upstream
  return new Response(relay.events(await readJson(upstream, ctx), ctx), { headers: SSE })
}

/**
 * A pass-through's JSON answer relayed: read here, under the provider's timeouts and
 * max_response_bytes, so every relay is bounded; a 200 whose body is an error throws it.
 */
async function relayedJson<View>(
  p: ProviderCall<View>,
  relay: Forwarding<View>,
  answer: Response,
): Promise<CallResult> {
  const out = relay.relayJson(await readText(answer, p.ctx), p.encodeCtx)
  // No usage from the upstream: a reservation settles to the answer's bytes (a token covers
  // at least one), and the request is recorded so (charge.ts `settle`), not as nothing.
  if (out.usage) p.finish(200, out.usage, null, null)
  else
    p.finish(200, null, null, null, {
      relayedBytes: Buffer.byteLength(out.body),
      seen: null,
      aborted: false,
      started: true,
    })
  return { ok: true, response: json(out.body, p.headers, true) }
}

/**
 * Sends `req` and lets go of its body: a stream's closures hold the attempt's call for the
 * stream's life, and the body (the client's text with its edits, as large as the client's) must
 * not stay with it (DESIGN §16). An adapter's `forward` takes the body before it first waits
 * (`ProviderAdapter.forward`), so it is cleared here as soon as `forward` returns, without an
 * `async` frame of this function's own (a promise, a generator and a scope a call); the adapter's
 * own pending fetch holds it until the upstream answers, as before. A retry builds its own.
 */
function forwardCall(adapter: ProviderAdapter, req: ForwardRequest, ctx: CallContext): Promise<Response> {
  if (!adapter.forward) {
    throw new Error(`provider '${ctx.provider.prefix}' cannot pass requests through`)
  }
  try {
    return adapter.forward(req, ctx)
  } finally {
    req.body = ''
  }
}

function json(body: unknown, headers: Record<string, string>, text = false): Response {
  return new Response(text ? (body as string) : JSON.stringify(body), {
    status: 200,
    headers: { ...headers, 'content-type': 'application/json' },
  })
}
