/**
 * @module
 * The output allowance (DESIGN §11): how many output tokens a request reserves, and so the
 * `max_tokens` the gateway sends upstream.
 *
 * Policy: the allowance is what the client asked for (`max_tokens` / `max_completion_tokens` /
 * `max_output_tokens`), or the model's maximum output when it asked for none — **clamped to what
 * the token rows and the budget have left after the input bound**. A clamped request is still
 * served: the smaller `max_tokens` is sent upstream (the upstream then cannot bill more output
 * than was reserved) and the response says so in `x-switchyard-max-tokens` (the value sent) and
 * `x-switchyard-max-tokens-reason` (`tpm`, `tpd`, `budget`, ...). A client that must have its full
 * `max_tokens` sees the header and the `length` finish reason. Only when less than
 * `min(wanted, MIN_USEFUL_OUTPUT)` output tokens fit is the request refused (429, or 402 for the
 * budget), because an answer cut after a few tokens would bill its whole input for nothing.
 */
import { type DearestPrices, highestCostMicros } from './pricing.ts'
import { type RowState, rowKey } from './rows.ts'

/** Fewer output tokens than this (or than asked, if less) are not worth serving. */
export const MIN_USEFUL_OUTPUT = 256

export interface AllowanceInput {
  /** The client's max_tokens (any of its spellings); null when it sent none. */
  requested: number | null
  /** The model's `max_output_tokens`. */
  modelMax: number
  /** The input bound (estimate-tokens.ts). */
  inputBound: number
  /** The rows' states before this request (remaining capacity per row). */
  states: RowState[]
  /** The dearest prices a token of the request can cost; null = free. */
  price: DearestPrices | null
}

export type Allowance =
  | {
      ok: true
      /** Output tokens reserved, and the max_tokens to send upstream. */
      tokens: number
      /** Set when less than wanted was granted: the row that bound it (`account:tokens:minute` ...). */
      clampedBy: string | null
      /** The reservation's highest cost, micro-dollars. */
      highestCost: number
    }
  | {
      ok: false
      /** The row that leaves too little. */
      state: RowState
      /** How many of that row's units the smallest useful request would need. */
      needs: number
    }

/** The output allowance within every token and money row. */
export function outputAllowance(a: AllowanceInput): Allowance {
  const wanted = Math.min(a.requested ?? a.modelMax, a.modelMax)
  const floor = Math.min(wanted, MIN_USEFUL_OUTPUT)
  let tokens = wanted
  let clampedBy: RowState | null = null
  for (const s of a.states) {
    let fits: number
    if (s.row.resource === 'tokens') fits = s.remaining - a.inputBound
    else if (s.row.resource === 'microdollars') fits = affordableOutput(a, s.remaining)
    else continue
    if (fits < floor) {
      const needs =
        s.row.resource === 'tokens' ? a.inputBound + floor : highestCostMicros(a.price, a.inputBound, floor)
      return { ok: false, state: s, needs }
    }
    if (fits < tokens) {
      tokens = fits
      clampedBy = s
    }
  }
  return {
    ok: true,
    tokens,
    clampedBy: clampedBy ? rowKey(clampedBy.row) : null,
    highestCost: highestCostMicros(a.price, a.inputBound, tokens),
  }
}

/** Output tokens that `left` micro-dollars pay for after the input bound (unbounded if output is free; −1: not even the input). */
export function affordableOutput(a: Pick<AllowanceInput, 'price' | 'inputBound'>, left: number): number {
  const p = a.price
  if (!p) return Number.MAX_SAFE_INTEGER
  // highestCost(n) = ceil((I*pIn + n*pOut) / 1e6) <= left  <=>  I*pIn + n*pOut <= left * 1e6.
  // Far more than any output cap (a large budget): the count itself does not matter, only that
  // it clamps nothing — no BigInt on the hot path.
  const rough = (left * 1e6 - a.inputBound * p.input) / p.output
  if (rough >= 2 ** 40) return Math.min(Math.floor(rough), Number.MAX_SAFE_INTEGER)
  const budget = BigInt(left) * 1_000_000n - BigInt(a.inputBound) * BigInt(p.input)
  if (budget < 0n) return -1
  if (p.output === 0) return Number.MAX_SAFE_INTEGER
  const n = budget / BigInt(p.output)
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n)
}
