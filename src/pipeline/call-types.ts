/**
 * @module
 * What a provider call is given and gives back (pipeline/call.ts `callProvider`): the request's
 * `finish` and what settles a stream its usage does not cover, the call itself, its result, and
 * the continuation that may rescue a translated stream (`Rescue`, operations/chat-continuation.ts).
 */
import type { ChatCompletionChunk, ChatRequest, Usage } from '../operations/chat.ts'
import type { StreamPlan } from '../providers/stream-plan.ts'
import type { CallContext, ProviderAdapter } from '../providers/types.ts'
import type { GatewayError } from '../util/errors.ts'
import type { PipelineDeps } from './deps.ts'
import type { ChunkGate } from './output-cut.ts'
import type { CutGate } from './stream/types.ts'
import type { ChatSurface, EncodeContext, Forwarding, ForwardRequest } from './surface.ts'

export type Finish = (
  status: number,
  /** For the record: the upstream's usage (its cache reads and writes too), or (a stream the client left) an estimate. */
  usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details'> | null,
  err: GatewayError | null,
  ttftMs: number | null,
  /** A stream that ended without the upstream's count of the whole answer: what settles it. */
  unaccounted?: Unaccounted,
) => void

/**
 * A stream the upstream's usage does not cover (the client left, the upstream broke or never
 * reported it, or a continuation's first part was estimated): settled from what was relayed
 * (pipeline/charge.ts).
 */
export interface Unaccounted {
  /** UTF-8 bytes of generated text that reached the client (StreamEncoder.relayedBytes). */
  relayedBytes: number
  /**
   * Under a token or money limit: the output tokens the answer generated, all choices, counted
   * as they arrived (OutputAllowance.counted, an upper bound); settled to in place of the bytes.
   */
  relayedTokens?: number
  /**
   * Under a token or money limit: the answer's input tokens as counted (CutGate.input) — the
   * input bound, and a continuation's prompt; settled to in place of the bound alone.
   */
  inputTokens?: number
  /** Whatever usage the upstream did report before the end (a part of the answer's), or null. */
  seen: Pick<Usage, 'prompt_tokens' | 'completion_tokens'> | null
  /** The client left (rather than the upstream failing). */
  aborted: boolean
  /** The upstream's answer began (StreamOutcome.started): its prompt was processed. */
  started: boolean
}

export interface ProviderCall<View> {
  deps: PipelineDeps
  surface: ChatSurface<View>
  adapter: ProviderAdapter
  ctx: CallContext
  encodeCtx: EncodeContext<View>
  stream: boolean
  call: { request: ChatRequest } | { forward: ForwardRequest; relay: Forwarding<View> }
  /** Streams: another target may take over if this one's first token is late (DESIGN §10). */
  hasFallback?: boolean
  /** Translated streams: continuing on another target after content (`continuation.ts`). */
  rescue?: Rescue
  /**
   * A translated stream to a model without `streaming`: asked for JSON (`adapter.complete`), its
   * answer served as the stream it stands for (`wholePlan`) — counted and cut like any.
   */
  whole?: boolean
  headers: Record<string, string>
  finish: Finish
  signal: AbortSignal
  /**
   * Under a token or money limit: the cut at the output allowance (output-cut.ts) — the chunk gate
   * on a translated call, the surface's event gate (`Forwarding.cut`) on a pass-through.
   */
  gate?: ChunkGate | CutGate<Uint8Array>
}

/**
 * One attempt's outcome. A failure the client has seen nothing of leaves the record to the
 * caller: `settle` records it as the request's outcome when no other attempt follows.
 */
export type CallResult =
  | {
      ok: true
      response: Response
      /**
       * A stream: settles when this attempt's part of it ends, with the failure that ended it after
       * content (a cut, a stall, an in-band error: what its continuation or in-band error event
       * took over from), or null when it ended well or the client left.
       */
      ended?: Promise<GatewayError | null>
    }
  | { ok: false; error: GatewayError; settle: () => void }

export interface Rescue {
  tap(source: StreamPlan<ChatCompletionChunk>): StreamPlan<ChatCompletionChunk>
  continueWith(err: GatewayError): Promise<StreamPlan<ChatCompletionChunk> | null>
  /** The first part's usage when the stream's usage does not count it (the continuation reported none). */
  uncounted(): { prompt_tokens: number; completion_tokens: number } | null
  /** The stream ended: with the failure that ended it (null when whole or the client left); judges a continuation. */
  ended(failure: GatewayError | null): void
}
