/**
 * @module
 * The provider call and the surface encode, for both routes a request can take:
 *
 * | route     | JSON                                              | stream                                             |
 * |-----------|---------------------------------------------------|----------------------------------------------------|
 * | translate | `adapter.complete` → `surface.encodeCompletion`   | `adapter.stream` → `surface.streamEncoder`          |
 * | forward   | `adapter.forward` → `forward.relayJson` (bytes)   | `adapter.forward` → body bytes → `forward.relayBytes` |
 *
 * `finish` is called exactly once per admitted request, with the status the client saw.
 */
import { abortError, networkErrorDetail, readText } from '../providers/http.ts'
import type { StreamPlan } from '../providers/stream-plan.ts'
import type { CallContext, ChatRequest, ProviderAdapter, Usage } from '../providers/types.ts'
import { disconnectedUsage } from '../usage/estimate.ts'
import { GatewayError } from '../util/errors.ts'
import type { PipelineDeps } from './deps.ts'
import type { StreamEncoder } from './stream-encoder.ts'
import { type StreamSource, writeStream } from './stream-writer.ts'
import type { ChatSurface, EncodeContext, Forwarding, ForwardRequest } from './surface.ts'

export type Finish = (
  status: number,
  usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens'> | null,
  err: GatewayError | null,
  ttftMs: number | null,
) => void

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
}

export interface ProviderCall<View> {
  deps: PipelineDeps
  surface: ChatSurface<View>
  adapter: ProviderAdapter
  ctx: CallContext
  encodeCtx: EncodeContext<View>
  stream: boolean
  call: { request: ChatRequest } | { forward: ForwardRequest; relay: Forwarding<View> }
  headers: Record<string, string>
  finish: Finish
  signal: AbortSignal
  /** The client's request body, for the token estimate of a stream the client left. */
  bodyText: string
}

export async function callProvider<View>(p: ProviderCall<View>): Promise<Response> {
  const { adapter, ctx, finish, call } = p
  if (!p.stream) {
    try {
      if ('request' in call) {
        const res = await adapter.complete(call.request, ctx)
        res.model = p.encodeCtx.modelId
        finish(200, res.usage ?? null, null, null)
        return json(p.surface.encodeCompletion(res, p.encodeCtx), p.headers)
      }
      const answer = await forwardCall(adapter, call.forward, ctx)
      // Read here, under the provider's timeouts and max_response_bytes, so every relay is bounded.
      const out = call.relay.relayJson(await readText(answer, ctx), p.encodeCtx)
      finish(200, out.usage, null, null)
      return new Response(out.body, {
        status: 200,
        headers: { ...p.headers, 'content-type': 'application/json' },
      })
    } catch (e) {
      const err = asGatewayError(e)
      finish(err.status, null, err, null)
      throw err
    }
  }

  let source: StreamSource<unknown>
  let encoder: StreamEncoder<unknown>
  try {
    if ('request' in call) {
      const req = call.request
      source = adapter.streamPlan ? await adapter.streamPlan(req, ctx) : await adapter.stream(req, ctx)
      encoder = p.surface.streamEncoder(p.encodeCtx) as StreamEncoder<unknown>
    } else {
      const upstream = await forwardCall(adapter, call.forward, ctx)
      if (!upstream.body)
        throw new GatewayError(502, 'upstream_invalid_response', 'The upstream stream has no body.')
      const { relay } = call
      if (relay.relayPlan) {
        const relayed = await relay.relayPlan(upstream, ctx, p.encodeCtx)
        source = relayed.plan
        encoder = relayed.encoder as StreamEncoder<unknown>
      } else if (relay.relayBytes) {
        source = { body: upstream.body, stages: [], ctx } satisfies StreamPlan<Uint8Array>
        encoder = relay.relayBytes(p.encodeCtx) as StreamEncoder<unknown>
      } else throw new Error(`surface '${p.surface.name}' cannot relay streams`)
    }
  } catch (e) {
    const err = asGatewayError(e)
    finish(err.status, null, err, null)
    throw err
  }
  const { metrics, config } = p.deps
  metrics.streamOpened()
  const out = await writeStream(source, encoder, {
    keepaliveMs: config.server.streamKeepaliveMs,
    holdMs: config.server.streamHoldMs,
    signal: p.signal,
    stop: p.deps.traffic.stopSignal,
    onFinish: (r) => {
      metrics.streamClosed()
      const status = r.error ? r.error.status : r.aborted ? 499 : 200
      // Most of the answer may have reached the client: record it, estimated (usage/estimate.ts).
      const usage = r.aborted ? disconnectedUsage(r.usage, r.relayedChars, p.bodyText) : r.usage
      finish(status, usage, r.error ?? (r.aborted ? abortError(undefined) : null), r.ttftMs)
    },
  })
  if (out.status === 'error') throw out.error
  return new Response(out.body, { status: 200, headers: { ...p.headers, ...SSE_HEADERS } })
}

function forwardCall(adapter: ProviderAdapter, req: ForwardRequest, ctx: CallContext): Promise<Response> {
  if (!adapter.forward) {
    throw new Error(`provider '${ctx.provider.prefix}' cannot pass requests through`)
  }
  return adapter.forward(req, ctx)
}

function json(body: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: { ...headers, 'content-type': 'application/json' },
  })
}

export function asGatewayError(e: unknown): GatewayError {
  if (e instanceof GatewayError) return e
  if ((e as Error)?.name === 'AbortError') return abortError(e)
  // The error's text may name the upstream's URL: it goes to the log only.
  return new GatewayError(
    502,
    'upstream_error',
    'Upstream call failed; it has been logged with this request id.',
    {
      detail: networkErrorDetail(e),
    },
  )
}
