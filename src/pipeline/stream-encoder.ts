/**
 * @module
 * The stream writer every surface shares. It holds the HTTP status until the source's first item
 * (so an upstream refusal is still a real HTTP error), then writes each item through the
 * surface's `StreamEncoder`, the encoder's keep-alive while the upstream is quiet, the encoder's
 * ending, or its error frame if the upstream fails after the first byte. It is pull-based: an
 * item is read from the source only when the client has taken the previous one, and a client
 * that leaves cancels the source (and so the upstream request).
 *
 * The source is either a stream of items or a `StreamPlan` (the upstream's raw body and the
 * transformers to run it through): a plan is driven in one stage — read a body chunk, run the
 * transformers and the encoder synchronously, enqueue — with the plan's idle / total timeouts,
 * the hold and the keep-alive on one timer (`StreamClock`), from an injectable scheduler.
 *
 * @example
 * const out = await writeStream(await adapter.stream(req, ctx), new ChatChunkEncoder(id, false), {
 *   keepaliveMs: 15_000, holdMs: 10_000, signal: request.signal, onFinish: (r) => record(r),
 * })
 * if (out.status === 'error') throw out.error
 * return new Response(out.body, { headers: { 'content-type': 'text/event-stream' } })
 */
import type { StreamPlan } from '../providers/stream-plan.ts'
import type { Usage } from '../providers/types.ts'
import type { GatewayError } from '../util/errors.ts'
import type { Scheduler } from '../util/scheduler.ts'
import { StreamWriter } from './stream-writer.ts'

/**
 * A surface's wire encoding of one stream, stateful (one per response). The writer calls
 * `encode` once per source item, then `end` after the last one, or `error` when the source fails
 * after the first byte; `usage` and `failure` are read once, when the stream finishes.
 */
export interface StreamEncoder<T> {
  /** Bytes for one item, or null to send nothing for it. */
  encode(item: T): Uint8Array | null
  /**
   * `encode` as text, when the encoder builds text anyway: the writer then joins the items of one
   * upstream read and encodes them once (a TextEncoder call costs about 1 µs per item).
   */
  encodeText?(item: T): string | null
  /** Bytes after the last item (e.g. `data: [DONE]`), or null. */
  end(): Uint8Array | null
  /** The frame that reports a failure after the first byte. */
  error(err: GatewayError): Uint8Array
  /** Sent while the upstream is quiet: an SSE comment, or a surface's own ping event. */
  readonly keepalive: Uint8Array
  /** Token counts seen in the stream, for the usage record. */
  usage(): Usage | null
  /** An error the upstream reported in-band and the encoder relayed as it was (pass-through). */
  failure?(): GatewayError | null
  /**
   * Characters of generated text (content, reasoning, tool names and arguments) encoded for the
   * client so far: the basis of the token estimate when the client disconnects.
   */
  relayedChars?(): number
}

export interface StreamOutcome {
  /** The upstream's usage, whether or not the client asked to see it. */
  usage: Usage | null
  /** Set when the stream failed (before or after the first byte). */
  error: GatewayError | null
  /** Milliseconds from the call to the first chunk; null if none arrived. */
  ttftMs: number | null
  /** The client went away before the end. */
  aborted: boolean
  /** See StreamEncoder.relayedChars; 0 when the encoder does not count. */
  relayedChars: number
}

export interface WriteStreamOptions {
  keepaliveMs: number
  /** How long to wait for the first chunk before committing to a 200. */
  holdMs: number
  /** The client's request signal. */
  signal?: AbortSignal
  /**
   * Aborted when the server stops waiting for streams (the shutdown drain's deadline): the stream
   * ends with the surface's error event for the signal's reason (`shutting_down`), recorded so.
   */
  stop?: AbortSignal
  /** Called exactly once, when the stream ends for whatever reason. Must not throw. */
  onFinish: (outcome: StreamOutcome) => void
  /** Time for the hold, keep-alive and the plan's timeouts; the real clock by default. */
  scheduler?: Scheduler
}

export type WriteStreamResult =
  | { status: 'ok'; body: ReadableStream<Uint8Array> }
  | { status: 'error'; error: GatewayError }

/** Items, or a plan whose last stage yields items (a plan without stages yields the raw chunks). */
export type StreamSource<T> = ReadableStream<T> | StreamPlan<T>

export function writeStream<T>(
  source: StreamSource<T>,
  encoder: StreamEncoder<T>,
  opts: WriteStreamOptions,
): Promise<WriteStreamResult> {
  return new StreamWriter(source, encoder, opts).open()
}
