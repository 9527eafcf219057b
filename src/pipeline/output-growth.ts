/**
 * @module
 * Output reservations that grow as the answer arrives (DESIGN §11: "Output does not hold what it
 * will not use"). A request without a cap of its own (no max_tokens / max_completion_tokens /
 * max_output_tokens) to models that show all they generate as it arrives (`canGrow`) is admitted holding its input and a first slice of output, OUTPUT_SLICE
 * tokens, not the model's whole maximum; the upstream is sent the most the limits could cover at
 * admission (what the rows leave after that, clamped to the model's maximum: `uncappedCap`), so it
 * never generates past what could be paid for. As the answer's running count (OutputAllowance,
 * output-allowance.ts) passes what is held, the reservation grows by another slice a choice (`Limiter.extend`,
 * all or nothing, atomic with admissions); when no slice can be had, by what the rows still leave;
 * when nothing is left, the answer ends as `length` at what is held.
 *
 * Exactness: the tokens (and money) of the requests admitted in a window never pass a limit,
 * because every token relayed is held first — at admission or by a growth the limiter granted
 * atomically against the same rows — and relaying stops at what is held, the upstream cancelled:
 * a chunk is relayed only when the count with it is held (output-allowance.ts), so the growth is
 * asked for the chunk that would pass the hold, and that chunk waits for it.
 *
 * Why 4,096 a slice: most answers are shorter (chat answers are hundreds of tokens, coding
 * agents' turns a few thousand), so they never grow — one admission, one settlement, as before —
 * while a TPM-100,000 key runs about 20 uncapped requests side by side (100,000 ÷ (input + 4,096))
 * instead of 3 holding a 32,000-token maximum each. A long answer grows once per 4,096 tokens it
 * generates: a 32,000-token answer 7 times, one limiter write per ~40 s of generation at
 * 100 tokens/s — nothing next to its admission. A smaller slice adds round-trips per answer for
 * little more concurrency; a larger one holds more than most answers use.
 */

import type { OutputFamily } from '../limits/output-count.ts'
import { highestCostMicros } from '../limits/pricing.ts'
import { type LimitRow, type RowState, rowKey } from '../limits/rows.ts'
import type { ChargeRequest, Reservation } from '../limits/types.ts'
import type { Limiter } from '../store/types.ts'
import { type GrowOutput, OutputAllowance } from './output-allowance.ts'

/** Output tokens an uncapped request holds at first, and grows by. */
export const OUTPUT_SLICE = 4_096

/**
 * The output a request reserves at admission: the client's cap, else one slice of the model's
 * maximum — or, when the answer cannot grow (`grows` false, `canGrow`), the model's maximum up to
 * `ceiling` (`unseenCeiling`: half the tightest limit), clamped by the limiter to what the rows
 * leave: the cap it is then sent.
 */
export const firstOutput = (
  requested: number | null,
  modelMax: number,
  grows: boolean,
  ceiling = modelMax,
): number =>
  Math.min(requested ?? (grows ? Math.min(modelMax, OUTPUT_SLICE) : Math.min(modelMax, ceiling)), modelMax)

/**
 * The most an uncapped answer that cannot grow (output unseen as it is generated: a reasoning
 * model's thinking, a model without `streaming`) holds per choice: half of the tightest token or
 * money row (money at the dearest output price), never under one slice. Its hold is the cap it is
 * sent, so nothing it bills passes the limit; half leaves room for a second request side by side —
 * holding the whole window, one uncapped Codex turn on a model whose maximum passes the TPM refused
 * every other request of the account until it settled, and a second session failed its turn after
 * its retries (audit66e). An answer that needs more ends `length`; a client's own cap is held as
 * asked.
 */
export function unseenCeiling(rows: readonly LimitRow[], price: { output: number } | null): number {
  let tightest = Number.POSITIVE_INFINITY
  for (const row of rows) {
    if (row.resource === 'tokens') tightest = Math.min(tightest, row.capacity)
    else if (row.resource === 'microdollars' && price && price.output > 0)
      tightest = Math.min(tightest, Math.floor((row.capacity * 1_000_000) / price.output))
  }
  return Math.max(OUTPUT_SLICE, Math.floor(tightest / 2))
}

/**
 * Whether an uncapped hold can grow as the answer arrives: every model that may answer lists
 * `streaming` (DESIGN §3: only then is a JSON answer under a limit asked as a stream, counted and
 * cut) and none lists `reasoning` or is configured `always_reasons`. A reasoning model's thinking is output billed but never counted
 * as it arrives (OpenAI's reasoning tokens, Gemini's thoughts, Claude's summarised or redacted
 * thinking): it comes before the visible answer, within the cap sent upstream, so a hold cannot
 * grow into it and the cap is all that bounds it. Such a request holds from admission the cap it
 * is sent, never room promised to several requests at once (audit66c: three uncapped 15,000-token
 * thinkers on TPM 20,000 billed 41,842).
 */
export const canGrow = (
  models: ReadonlyArray<{ features: readonly string[]; always_reasons?: boolean }>,
): boolean =>
  models.every(
    (m) => m.features.includes('streaming') && !m.features.includes('reasoning') && m.always_reasons !== true,
  )

/**
 * The cap sent upstream for an uncapped request: what it holds plus what every row leaves after
 * its admission (a money row's at the dearest output price), never above the model's maximum;
 * `by`: the row that bound it below the maximum, or null.
 */
export function uncappedCap(
  r: Reservation,
  charge: ChargeRequest,
  modelMax: number,
): { cap: number; by: string | null } {
  let cap = modelMax
  let by: string | null = r.clampedBy
  for (const s of r.states) {
    const more = room(s, charge)
    if (more === null || r.outputTokens + more >= cap) continue
    cap = r.outputTokens + more
    by = rowKey(s.row)
  }
  return { cap, by: cap < modelMax ? by : null }
}

/** Output tokens a row still has room for (null: it does not bound output). */
function room(s: RowState, charge: ChargeRequest): number | null {
  if (s.row.resource === 'tokens') return s.remaining
  if (s.row.resource !== 'microdollars' || !charge.price || charge.price.output === 0) return null
  return Math.floor((s.remaining * 1_000_000) / charge.price.output)
}

/** What a growing answer needs to ask the limiter with. */
export interface Growth {
  limiter: Pick<Limiter, 'extend'>
  accountId: number
  keyId: string
  charge: ChargeRequest
  /** The cap sent upstream: the answer cannot bill more output than this (all choices). */
  cap: number
  /** Output tokens a growth asks for: the first hold's (a slice per choice); OUTPUT_SLICE by default. */
  step?: number
  now: () => number
}

/**
 * The `grow` a growing reservation's allowance asks when a chunk would take the count past what is
 * held. Each growth is written into `r` (its tokens, output and money as held now, its rows'
 * states), so settlement and a continuation work from what is held; it resolves to the output
 * now held.
 */
export function growingAllowance(r: Reservation, g: Growth): GrowOutput {
  const ask = async (tokens: number) => {
    const micros = g.charge.price
      ? highestCostMicros({ input: 0, output: g.charge.price.output }, 0, tokens)
      : 0
    const e = await g.limiter.extend({
      handle: r.handle,
      accountId: g.accountId,
      keyId: g.keyId,
      rows: g.charge.rows,
      tokens,
      micros,
      now: g.now(),
    })
    if (e.tokens > 0 || e.micros > 0) {
      r.tokens += e.tokens
      r.outputTokens += e.tokens
      r.micros += e.micros
      if (e.states.length) r.states = e.states
    }
    return e
  }
  return async (counted, limit) => {
    const over = Math.max(0, counted - r.outputTokens)
    const step = g.step ?? OUTPUT_SLICE
    const want = Math.min(g.cap - r.outputTokens, over + step)
    if (want <= 0) return Math.max(limit, r.outputTokens)
    const e = await ask(want)
    if (e.tokens === 0 && e.states.length) {
      // No whole slice: what every row still leaves, once (another request may take it first).
      const left = Math.min(want, ...e.states.map((s) => room(s, g.charge) ?? want))
      if (left > 0) await ask(left)
    }
    return Math.max(limit, r.outputTokens)
  }
}

/**
 * The running check of an answer's output (OutputAllowance) for a request under a token or money
 * limit: growing from its first slice when it is uncapped (`growth`), else fixed at what it holds.
 */
export function allowanceFor(r: Reservation, family: OutputFamily, growth: Growth | null): OutputAllowance {
  if (!growth) return new OutputAllowance(r.outputTokens, family)
  return new OutputAllowance(r.outputTokens, family, growingAllowance(r, growth), growth.cap)
}
