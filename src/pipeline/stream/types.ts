/**
 * @module
 * What the stream writer (writer.ts) is given: its options, the output gate it shows items to,
 * and the source it reads — a stream of items or a `StreamPlan`.
 */
import type { StreamPlan } from '../../providers/stream-plan.ts'
import type { GatewayError } from '../../util/errors.ts'
import type { Scheduler } from '../../util/scheduler.ts'
import type { StreamOutcome } from './encoder.ts'

export interface WriteStreamOptions<T = unknown> {
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
  /**
   * A source that is not a plan (a stream of items, as the writer's tests give) has no timeouts of
   * its own: this total limit, and the error it ends with. A plan's are its `ctx.timeouts` (every
   * adapter's and relay's source is a plan).
   */
  total?: { ms: number; error: () => GatewayError }
  /** Time for the hold, keep-alive and the plan's timeouts; the real clock by default. */
  scheduler?: Scheduler
  /**
   * When the upstream call began, on the scheduler's clock: the time to first token counts from
   * it (the wait for the upstream's headers included), to the first content-bearing item. By
   * default, from when the writer was made.
   */
  startedAt?: number
  /**
   * Hold the status and every byte until the first content-bearing item (the encoder's
   * `contentStarted()`, else its `relayedBytes()` grows; a role-only or empty delta is not
   * content), so that a failure before it is still an HTTP error the attempt loop may retry
   * unseen (DESIGN §10). Before content the idle timeout does not apply (a reasoning model may
   * think in silence); `firstToken` does.
   */
  holdForContent?: boolean
  /**
   * With `holdForContent`: `ms` after the headers with no content, fail with 504
   * `upstream_timeout` (slow first token) if `failOver` — there is a fallback to go to, so the
   * status is held that long too — else keep waiting (total_ms still applies).
   */
  firstToken?: { ms: number; failOver: boolean }
  /**
   * After content, when the source fails (cut, stall, error): a source that continues the answer
   * (another target, prefilled with the text relayed so far), or null. Its items go through the
   * same encoder, so the client's stream reads as one answer; the failed source is cancelled.
   * Asked at most once; null (or a throw) ends the stream with the original error, as without it.
   */
  continueWith?: (err: GatewayError) => Promise<StreamSource<T> | null>
  /** Cleans the source's failure before anyone sees it (the provider's key and address). */
  scrub?: (err: GatewayError) => GatewayError
  /**
   * Bounds what is relayed (DESIGN §11, pipeline/output-cut.ts): each item is shown to it before it
   * is encoded; at the first it refuses, that item and everything after it are dropped, the gate's
   * ending goes out in their place, and the stream ends there (the upstream is cancelled). Only
   * given when a token or money limit applies: without it the writer does no per-item work.
   */
  gate?: OutputGate<T>
}

/** See `WriteStreamOptions.gate`. */
export interface OutputGate<T> {
  /** Whether `item` may be relayed (it is counted here); a promise while the allowance grows. */
  admit(item: T): boolean | Promise<boolean>
  /** The items that end the answer in place of the refused one (a `length` finish, the usage). */
  ending(): T[]
}

/**
 * A gate that counts: after the stream (or the assembled JSON answer) a cut one is settled to
 * what it counted (`counted`, output tokens, all choices: an upper bound of what was billed).
 * The chat chunk gate (pipeline/output-cut.ts) and a pass-through's own (`Forwarding.cut`).
 */
export interface CutGate<T> extends OutputGate<T> {
  /** The allowance ended the answer. */
  readonly cut: boolean
  /** Output tokens generated so far. */
  readonly counted: number
  /**
   * Input tokens the answer is settled with: the reservation's input bound, and the prompt of a
   * stream's continuation (DESIGN §10: it resends the prompt, the relayed text as its prefill).
   */
  readonly input: number
  /**
   * Taken when a JSON attempt begins; the function it returns, called when the attempt fails,
   * gives back what was counted since (OutputAllowance.mark: nothing of it reached the client).
   */
  mark(): () => void
}

export type WriteStreamResult =
  | { status: 'ok'; body: ReadableStream<Uint8Array> }
  | { status: 'error'; error: GatewayError }

/** Items, or a plan whose last stage yields items (a plan without stages yields the raw chunks). */
export type StreamSource<T> = ReadableStream<T> | StreamPlan<T>
