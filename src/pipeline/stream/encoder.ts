/**
 * @module
 * What a surface gives the stream writer (`writer.ts`): its wire encoding of one stream
 * (`StreamEncoder`), and what the writer reports when the stream ends (`StreamOutcome`).
 */
import type { Usage } from '../../operations/chat.ts'
import type { GatewayError } from '../../util/errors.ts'

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
  /** The stream's content type when it is not SSE (`text/event-stream`); absent for SSE. */
  readonly contentType?: string
  /** Sent while the upstream is quiet: an SSE comment, or a surface's own ping event. */
  readonly keepalive: Uint8Array
  /** Token counts seen in the stream, for the usage record. */
  usage(): Usage | null
  /** An error the upstream reported in-band and the encoder relayed as it was (pass-through). */
  failure?(): GatewayError | null
  /**
   * UTF-8 bytes of generated text (content, reasoning, refusals, tool names and arguments)
   * encoded for the client so far, never fewer than it holds (a byte relay may count JSON escapes
   * as written). It bounds the output tokens relayed (a token covers at least one byte): a stream
   * whose usage never came settles its reservation to it (pipeline/charge.ts), and the record of
   * a stream the client left estimates its tokens from it (usage/estimate.ts).
   */
  relayedBytes?(): number
  /**
   * Content-bearing output has been encoded: the writer's hold for content (writer.ts)
   * ends here. Without it, content is `relayedBytes()` growing. For an encoder whose content is
   * more than the text it counts (the Responses pass-through: a finished output item, a terminal
   * event of an empty answer).
   */
  contentStarted?(): boolean
  /** Upstream events that were not well formed: skipped, never relayed. */
  malformed?(): number
}

export interface StreamOutcome {
  /** The upstream's usage, whether or not the client asked to see it. */
  usage: Usage | null
  /** Set when the stream failed (before or after the first byte). */
  error: GatewayError | null
  /** Milliseconds from the upstream call to the first content; null if none arrived. */
  ttftMs: number | null
  /**
   * The upstream's answer began: an item was encoded (a role chunk, say), held or sent. A client
   * that leaves after it has had the prompt processed for it (settlement: charge.ts `settle`).
   */
  started: boolean
  /** The client went away before the end. */
  aborted: boolean
  /** See StreamEncoder.relayedBytes; 0 when the encoder does not count. */
  relayedBytes: number
  /** See StreamEncoder.malformed. */
  malformed?: number
}

/**
 * The outcome the writer reports, read from `encoder` once the stream ended. A client that left
 * after the upstream's in-band failure reached it (`failure()`: a client stops reading at an error
 * event) leaves a stream that ended with that failure, not with its leaving.
 */
export function outcomeOf<T>(
  encoder: StreamEncoder<T>,
  error: GatewayError | null,
  aborted: boolean,
  ttftMs: number | null,
  started: boolean,
): StreamOutcome {
  const failed = aborted ? (encoder.failure?.() ?? null) : null
  if (failed) {
    error = failed
    aborted = false
  }
  let usage: Usage | null = null
  let relayedBytes = 0
  try {
    usage = encoder.usage()
    relayedBytes = encoder.relayedBytes?.() ?? 0
  } catch {}
  const malformed = encoder.malformed?.() ?? 0
  const outcome: StreamOutcome = { usage, error, ttftMs, started, aborted, relayedBytes }
  if (malformed > 0) outcome.malformed = malformed
  return outcome
}
