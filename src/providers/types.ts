/**
 * @module
 * The provider adapter interface. The gateway hands an adapter the chat operation's canonical
 * request (operations/chat.ts) that has already passed validation, routing, plan and feature
 * checks; the adapter talks to its upstream and answers in the canonical shapes. Adapters never
 * see API keys of Switchyard users.
 */
import type { ModelConfig, ProviderConfig } from '../config/schema.ts'
import type { JsonText } from '../json/spliced.ts'
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../operations/chat.ts'
import type { EmbeddingRequest, EmbeddingResult } from '../operations/embeddings.ts'
import type { GatewayError } from '../util/errors.ts'
import type { Deadline } from '../util/scheduler.ts'

export interface Timeouts {
  firstByteMs: number
  idleMs: number
  totalMs: number
  /** Streams: from the headers to the first content-bearing event (acted on with a fallback only). */
  firstTokenMs?: number
}

export interface CallContext {
  provider: ProviderConfig
  model: ModelConfig
  /** Aborted when the client goes away or a total timeout fires; adapters pass it to `fetch`. */
  signal: AbortSignal
  requestId: string
  timeouts: Timeouts
  /**
   * Aborts `signal` with the given reason. When present, `upstreamFetch`'s first-byte timeout uses
   * it rather than a controller and a merged signal of its own.
   */
  cancel?: (reason: GatewayError) => void
  /** The request's one timer (first byte, then the stream's deadlines); a timer of their own when absent. */
  deadline?: Deadline
  /** A stream event that was not well formed was skipped (counted in the metrics). */
  onMalformed?: () => void
  /**
   * The most this call's answer may be, when the request itself says how large a legitimate answer
   * is (embeddings: inputs × dimensions); else the provider's cap (body-limit.ts).
   */
  maxResponseBytes?: number
  /**
   * Under a token or money limit, the most output tokens the answer may be cut within (the
   * allowance's most, `CutGate.most`): a whole JSON answer read as a stream is split into pieces
   * only as far as that (text-pieces.ts). Absent: no cut to make, each text one piece.
   */
  cutWithin?: number
  /** W3C `traceparent` of this attempt's span, sent upstream (telemetry on, request sampled). */
  traceparent?: string
}

export interface ProviderAdapter {
  /** Non-streaming call. Throws `GatewayError` (status from `upstreamError`) on any failure. */
  complete(req: ChatRequest, ctx: CallContext): Promise<ChatCompletion>
  /**
   * Streaming call, described rather than piped: the upstream's body and the transformers that
   * make OpenAI chunks of it (the stream writer drives them in one stage, with the plan's
   * timeouts). The adapter asks its upstream for usage and puts it on a final `choices: []` chunk
   * with `usage` set (the writer decides whether the client sees it). Resolves once the upstream
   * accepted the request (2xx headers); a refusal rejects with a `GatewayError` so the client gets
   * a real HTTP status. Failures after that are thrown from the body or a stage (a `GatewayError`
   * where possible); cancelling the body aborts the upstream request.
   */
  stream(req: ChatRequest, ctx: CallContext): Promise<StreamPlan<ChatCompletionChunk>>
  /**
   * Pass-through, for a surface that speaks this provider's own wire: sends `body` to `path` with
   * the provider's key and the given client headers, and resolves with the upstream's 2xx
   * response as it is (a refusal rejects like `stream`). Absent on kinds without a surface. It
   * takes `req.body` before it first waits (the caller lets go of the body once it returns:
   * pipeline/call.ts `forwardCall`).
   */
  forward?(req: ForwardCall, ctx: CallContext): Promise<Response>
  /**
   * The embeddings operation, translated to the provider's wire: gemini, demo, and openai for
   * another surface's wire (Gemini's; `/v1/embeddings` passes through `forward`). Absent where
   * embeddings do not exist (anthropic: refused at config load).
   */
  embeddings?: EmbeddingCalls
}

/** One provider's embeddings calls: the operation's canonical request in, vectors out. */
export interface EmbeddingCalls {
  /** Refuses what this provider cannot embed, with a 400 naming the field. Runs before admission. */
  check(req: EmbeddingRequest, model: ModelConfig): void
  /**
   * Fields of the canonical request this provider's wire has no place for and that change no
   * vector (OpenAI's `user`): left out, and named in `x-switchyard-dropped-params` as chat names them.
   */
  readonly leavesOut?: readonly (keyof EmbeddingRequest)[]
  /**
   * One vector per input item, in order, and the usage to record. Throws `GatewayError`s. A
   * provider that sends a long input in several calls (Gemini's parts of 100) keeps in `answered`
   * the vectors of each part its upstream answered, in order, and sends only the parts after them:
   * a retry of the same route (the caller passes the same array) asks, and is billed for, only the
   * parts still unanswered.
   */
  embed(req: EmbeddingRequest, ctx: CallContext, answered?: number[][][]): Promise<EmbeddingResult>
}

/** A request to relay as it is (see `ProviderAdapter.forward`). */
export interface ForwardCall {
  /** Path under the provider's API root, e.g. `/v1/messages`. */
  path: string
  /** The body: one string, or a large one's pieces (`json/spliced.ts`), sent without joining them. */
  body: JsonText
  /** Client headers the upstream must see (e.g. `anthropic-beta`). */
  headers: Record<string, string>
  /**
   * The body already asks for a stream (a JSON request under a limit, asked so in the forwarding's
   * one edit of the client's body): `Forwarding.streamed` is not applied to it again.
   */
  streamed?: true
  /** The body already carries the output cap it was asked for (`ForwardAsk.cap`): not clamped again. */
  capped?: true
}

/**
 * What a pass-through's request is asked to carry beyond the client's body, for a forwarding that
 * can make it in its one edit of the body (else the caller edits the body again after it).
 */
export interface ForwardAsk {
  /** A JSON request that will be asked as a stream (under a limit). */
  streamed?: boolean
  /** The output cap the limits set (operations/chat-cap.ts). */
  cap?: number
}

/**
 * An upstream stream described rather than piped: the raw body and the transformers (SSE parse,
 * the adapter's decoder) the stream writer runs it through, synchronously, in one stage
 * (`stream-plan.ts` builds and runs them). `T` is what the last stage yields (the raw chunks
 * when there is none).
 */
export interface StreamPlan<T> {
  /** The upstream's raw bytes; a local model's (the demo's) chunks themselves, with no stages. */
  body: ReadableStream<unknown>
  stages: ReadonlyArray<Transformer<any, any>>
  /** Timeouts, the client's signal, the provider (for error texts). */
  ctx: CallContext
  /** Type marker only: never set. */
  readonly item?: T
}
