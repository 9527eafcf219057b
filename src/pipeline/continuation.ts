/**
 * @module
 * Stream rescue after content (DESIGN §10): when a stream that already reached the client is cut,
 * stalls or fails in-band, the answer is continued on the next target that lists the feature
 * `prefill`, with the text relayed so far sent as a trailing assistant message; its chunks go
 * through the client's encoder, so the client reads one answer. At most one switch; a refusal of
 * the continuation never replaces the original error (the stream then ends with it in-band).
 *
 * Only text can be continued so: once anything else of the answer reached the client (a tool call,
 * reasoning, a refusal, audio, a second choice, the finish), the next target could not go on from
 * it (a tool call begun again at the same index is merged by SDKs into arguments that are not
 * JSON), so the stream ends with the error in-band, as with no target to continue on.
 *
 * Continuation splices chunks, so a request that may be continued is translated on every target
 * (its stream is chat chunks, whatever the surface), even where a pass-through was possible — but
 * a request that translation would strip of something its pass-through keeps is not continuable
 * (`Forwarding.lostInTranslation`, `rescueFor` in attempts.ts).
 *
 * @example
 * const rescue = new Continuation(plan, start)
 * source = rescue.tap(source)                               // records the text relayed
 * writeStream(source, encoder, { continueWith: (err) => rescue.next(err) })
 */

import { type OutputFamily, outputTokenCount } from '../limits/output-count.ts'
import type { Reservation } from '../limits/types.ts'
import type { ChatCompletionChunk, ChatRequest, Usage } from '../operations/chat.ts'
import type { Attempt, AttemptPlan, FailureKind } from '../providers/resilience/index.ts'
import { classify } from '../providers/resilience/index.ts'
import type { StreamPlan } from '../providers/stream-plan.ts'
import { disconnectedUsage, utf8Bytes } from '../usage/estimate.ts'
import type { GatewayError } from '../util/errors.ts'

/**
 * Starts the continuation's call on `attempt` with `req`, `relayed` being the text it continues;
 * throws the upstream's refusal; null when it is not made (it would not fit the reservation).
 */
export type StartContinuation = (
  attempt: Attempt,
  req: (translated: ChatRequest) => ChatRequest,
  relayed: string,
) => Promise<StreamPlan<ChatCompletionChunk> | null>

export class Continuation {
  /**
   * The answer's text the client has been sent (content deltas of choice 0); null once it was sent
   * anything else, which no continuation can carry (`textAfter`).
   */
  private relayed: string | null = ''
  private first: { prompt_tokens: number; completion_tokens: number } | null = null
  /** The first part's `id`, `created` and `system_fingerprint`: the continuation's chunks take them. */
  private head: Pick<ChatCompletionChunk, 'id' | 'created' | 'system_fingerprint'> | null = null
  /** The continuation's usage chunk came, the first part added to it (`tap`). */
  private counted = false
  /** The continuation's target, judged when the stream ends (`ended`). */
  private verdict: ((failure: FailureKind | null) => void) | null = null

  constructor(
    private readonly plan: AttemptPlan,
    private readonly start: StartContinuation,
    /** Classifies a refused continuation for the plan (circuits, key rests). */
    private readonly factsOf: (err: GatewayError) => Parameters<typeof classify>[0],
  ) {}

  /**
   * `source` with what it relays recorded as it passes; a continuation's (`continuing`) is not
   * recorded (there is no second switch), only its own head chunk dropped and its usage made the
   * whole answer's: the first part's added, so the client reads what the request is recorded with.
   */
  tap(source: StreamPlan<ChatCompletionChunk>, continuing = false): StreamPlan<ChatCompletionChunk> {
    const stage: Transformer<ChatCompletionChunk, ChatCompletionChunk> = {
      transform: (chunk, controller) => {
        if (continuing) {
          // A continuation's role-only opening chunk would restart the client's message.
          if (isHeadOnly(chunk)) return
          // One answer: the continuation's chunks go on under the head the client began reading.
          if (this.head) Object.assign(chunk, this.head)
          if (chunk.usage && this.first) {
            chunk.usage = withFirst(chunk.usage, this.first)
            this.counted = true
          }
        } else {
          this.head ??= headOf(chunk)
          if (this.relayed !== null) this.relayed = textAfter(this.relayed, chunk)
        }
        controller.enqueue(chunk)
      },
    }
    return { ...source, stages: [...source.stages, stage] }
  }

  /**
   * The writer's `continueWith`: the next `prefill` target, asked to continue the relayed text;
   * null when there is none, no text was relayed, something else was too (a tool call…), or it
   * refused (the original error stands).
   */
  async next(
    err: GatewayError,
    /** The request body as parsed: the first part's prompt is estimated from it without a reservation. */
    body: unknown,
    /** The request's reservation: the first part is counted at its input bound. */
    reservation: Reservation | null = null,
    /** The first target's output family (output-allowance.ts `answerFamily`): how its relayed text is counted in tokens. */
    family: OutputFamily = 'o200k',
  ): Promise<StreamPlan<ChatCompletionChunk> | null> {
    const text = this.relayed
    if (!text) return null
    // Only where the failure's kind may fail over to (an `internal` one: another provider kind).
    const attempt = this.plan.continuation(classify(this.factsOf(err)))
    if (attempt === null) return null
    let source: StreamPlan<ChatCompletionChunk> | null
    try {
      // The answer's reasoning happened before the cut: the continuation only finishes its text,
      // and is asked no reasoning (Anthropic refuses a prefilled answer while thinking).
      source = await this.start(
        attempt,
        ({ reasoning_effort: _, ...req }) => ({
          ...req,
          messages: [...req.messages, { role: 'assistant', content: text }],
        }),
        text,
      )
    } catch (e) {
      const err = e as GatewayError
      if (err?.code === 'client_closed_request') this.plan.abandoned()
      else this.plan.failed(classify(this.factsOf(err)))
      return null
    }
    if (source === null) {
      this.plan.abandoned()
      return null
    }
    // Judged when the stream ends, as the first target was: a cut after it started is its failure.
    this.verdict = this.plan.streaming()
    // What the first target produced (its own usage never came): added to the second's. With a
    // reservation, counted as it was fitted: the input bound and the text's tokens (an upper
    // bound, limits/output-count.ts); else estimated.
    this.first = reservation
      ? {
          prompt_tokens: reservation.tokens - reservation.outputTokens,
          completion_tokens: outputTokenCount(text, family),
        }
      : disconnectedUsage(null, utf8Bytes(text), body)
    return this.tap(source, true)
  }

  /**
   * The stream ended: with `failure` after the continuation took over (null when whole, or the
   * client left). The continuation's target is judged by it; the kind of the failure, or null.
   */
  ended(failure: GatewayError | null): FailureKind | null {
    const verdict = this.verdict
    if (verdict === null) return null
    this.verdict = null
    const kind = failure ? classify(this.factsOf(failure)) : null
    verdict(kind)
    return kind
  }

  /** The first part's usage (estimated); null when no continuation happened. */
  carried(): { prompt_tokens: number; completion_tokens: number } | null {
    return this.first
  }

  /** The first part's usage when the answer's does not count it yet (the continuation reported none). */
  uncounted(): { prompt_tokens: number; completion_tokens: number } | null {
    return this.counted ? null : this.first
  }
}

/** A continuation's usage with the first part's added (its details, cached and reasoning, are its own). */
function withFirst(u: Usage, first: { prompt_tokens: number; completion_tokens: number }): Usage {
  const prompt = u.prompt_tokens + first.prompt_tokens
  const completion = u.completion_tokens + first.completion_tokens
  return { ...u, prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

/** Usage of both parts of a continued stream. */
export function summed(
  a: Pick<Usage, 'prompt_tokens' | 'completion_tokens'> | null,
  b: { prompt_tokens: number; completion_tokens: number } | null,
): Pick<Usage, 'prompt_tokens' | 'completion_tokens'> | null {
  if (b === null) return a
  return {
    prompt_tokens: (a?.prompt_tokens ?? 0) + b.prompt_tokens,
    completion_tokens: (a?.completion_tokens ?? 0) + b.completion_tokens,
  }
}

/**
 * `text` followed by the text `chunk` relays, or null when the chunk relays anything else: a
 * prefilled continuation carries only choice 0's text, so it cannot go on from a tool call (nor a
 * legacy `function_call`), reasoning, a refusal, audio, another choice or a finish the client has.
 * Anything but `role` and `content` counts unless empty (upstreams send `refusal: null`,
 * `tool_calls: []`, `reasoning_content: null` beside text), so a kind not named here is never
 * continued over. Runs on every chunk: one pass over the delta's few keys.
 */
function textAfter(text: string, chunk: ChatCompletionChunk): string | null {
  const choices = chunk.choices
  // A usage chunk (no choices) adds nothing; a chunk of several choices means several answers.
  if (!choices || choices.length === 0) return text
  if (choices.length > 1) return null
  const choice = choices[0]!
  if ((choice.index ?? 0) !== 0 || choice.finish_reason) return null
  const delta = choice.delta as Record<string, unknown> | undefined
  for (const key in delta) {
    const value = delta[key]
    if (key === 'content') {
      if (typeof value === 'string') text += value
      else if (value != null) return null
    } else if (key !== 'role' && !isEmpty(value)) return null
  }
  return text
}

function isEmpty(value: unknown): boolean {
  return value == null || value === '' || (Array.isArray(value) && value.length === 0)
}

/** What names a stream's answer in each of its chunks (a missing fingerprint stays missing). */
function headOf(
  chunk: ChatCompletionChunk,
): Pick<ChatCompletionChunk, 'id' | 'created' | 'system_fingerprint'> {
  const { id, created, system_fingerprint } = chunk
  return { id, created, system_fingerprint }
}

function isHeadOnly(chunk: ChatCompletionChunk): boolean {
  if (chunk.usage) return false
  for (const c of chunk.choices ?? []) {
    const d = c.delta as Record<string, unknown> | undefined
    if (c.finish_reason) return false
    if (d && (d.content || d.tool_calls || d.reasoning_content || d.reasoning || d.refusal)) return false
  }
  return true
}
