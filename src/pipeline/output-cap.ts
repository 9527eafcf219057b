/**
 * @module
 * The output cap a request is sent with, and a continuation's (DESIGN §10, §11): a stream
 * continued on a prefill fallback may generate only what is left of the client's cap and of the
 * reservation, which must also hold the continuation's own prompt. No import of the attempt loop:
 * `charge.ts` and `attempts.ts` both use it.
 */
import type { ModelConfig } from '../config/schema.ts'
import { dearestOf } from '../limits/model-cost.ts'
import { highestCostMicros } from '../limits/pricing.ts'
import type { Reservation } from '../limits/types.ts'
import type { ChatRequest } from '../operations/chat.ts'
import type { OutputAllowance } from './output-allowance.ts'

/** The translated request with the output allowance, in the field the client used, else the current one. */
export function capRequest(req: ChatRequest, n: number): void {
  if (req.max_tokens != null && req.max_completion_tokens == null) req.max_tokens = n
  else req.max_completion_tokens = n
}

/** What a continuation (DESIGN §10) is fitted to: the request's reservation and output caps. */
export interface ContinuationCharge {
  /** Null: no token or money limit applies. */
  reservation: Reservation | null
  /** The client's own output cap (any spelling), or null. */
  requested: number | null
  /** The output allowance sent upstream in place of the client's, or null. */
  cap: number | null
  /** Under a token or money limit: the running count of the answer's output (output-allowance.ts). */
  allowance?: OutputAllowance
}

/**
 * The input tokens a stream's continuation is counted with (DESIGN §10, §11): the prompt's bound
 * again and the relayed text as its prefill (`prefill`: as the next target's provider counts it).
 */
export function continuationInput(r: Reservation, prefill: number): number {
  return r.tokens - r.outputTokens + prefill
}

/**
 * The output cap of a stream's continuation after `relayed` output tokens of text (counted as the
 * first target's provider bills them, limits/output-count.ts: an upper bound), conservatively:
 * the first part as its input bound plus the tokens relayed as its output, the continuation's
 * input as the prompt's bound plus the prefill's tokens (`prefill`: the same text as the next
 * target's provider counts it). What is left of the reservation's tokens after both, and of its
 * money at each model's highest prices (when a money row applies), and never more than the client's max_tokens less
 * what was relayed. 0: no continuation fits (not even one token); null: nothing caps it.
 */
export function continuationAllowance(
  c: ContinuationCharge | undefined,
  relayed: number,
  prefill: number,
  first: ModelConfig,
  next: ModelConfig,
): number | null {
  let cap = c?.requested != null ? c.requested - relayed : Number.POSITIVE_INFINITY
  const r = c?.reservation
  if (r) {
    const input = r.tokens - r.outputTokens
    const again = continuationInput(r, prefill)
    cap = Math.min(cap, r.outputTokens - relayed, r.tokens - (input + relayed) - again)
    if (r.states.some((s) => s.row.resource === 'microdollars')) {
      const left = r.micros - highestCostMicros(dearestOf(first), input, relayed)
      const p = dearestOf(next)
      // cost ≤ left ⇔ (in·p.input + out·p.output) / 1e6 rounded up ≤ left (an integer).
      const room = left * 1_000_000 - again * (p?.input ?? 0)
      if (room < 0) return 0
      if (p && p.output > 0) cap = Math.min(cap, Math.floor(room / p.output))
    }
  }
  if (cap === Number.POSITIVE_INFINITY) return null
  return Math.max(0, Math.floor(cap))
}
