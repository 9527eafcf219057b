/**
 * @module
 * Tokens and money in the pipeline (DESIGN §11), one step on each side of the call: before
 * admission the key's model list, the plan's context cap and the reservation to ask for; after
 * it the output allowance applied to what goes upstream (and announced in headers); at the end
 * the settlement and the request's cost, written with its outcome by the usage flush.
 *
 * Admission happens once before the call (whatever retries it makes) and settlement once after.
 * A request whose plan and key set no token or money limit skips all of it but the cost.
 */
import type { Auth } from '../auth/authenticate.ts'
import type { CatalogueEntry } from '../catalogue/entry.ts'
import { keyCounts } from '../config/limit-settings.ts'
import type { ModelConfig, PlanConfig } from '../config/schema.ts'
import { affordableOutput } from '../limits/allowance.ts'
import { type InputTarget, inputTokenBound, UNCOUNTED_INPUT } from '../limits/estimate-tokens.ts'
import { dearestOf, unitsOf } from '../limits/model-cost.ts'
import { type DearestPrices, highestCostMicros } from '../limits/pricing.ts'
import {
  budgetExceededError,
  contextLengthError,
  tokenLimitError,
  uncountedInputError,
} from '../limits/refusals.ts'
import { rowHeaders } from '../limits/row-headers.ts'
import { type LimitRow, type LimitSettings, limitRows, type RowState } from '../limits/rows.ts'
import { NO_SURCHARGE, type Surcharge, surchargedPrice, surchargeOf } from '../limits/surcharge.ts'
import type { ChargeRefusal, ChargeRequest, Reservation, Settlement } from '../limits/types.ts'
import type { KeyLimits } from '../store/types.ts'
import type { GatewayError } from '../util/errors.ts'
import type { Unaccounted } from './call-types.ts'
import { canGrow, firstOutput, uncappedCap, unseenCeiling } from './output-growth.ts'

/** What the pre-admission step decided for one request. */
export interface ChargePlan {
  /** Asked of the limiter; undefined when no token, money or key row applies. */
  charge: ChargeRequest | undefined
  /** The output tokens the client asked for (any spelling), or null. */
  requested: number | null
  /** What the request asks beyond the price table, priced (limits/surcharge.ts). */
  surcharge: Surcharge
  /**
   * Choices the answer has (chat's `n`; 1 elsewhere): every output reservation, clamp and
   * settlement is for all of them — the reservation holds n × the per-choice cap (`choiceCap`).
   */
  choices: number
  /** The model's maximum output tokens (0: an embedding model): an uncapped request may grow to it. */
  modelMax: number
  /**
   * A token or money row applies (then `charge` is set): the answer is counted as it arrives and
   * cut at the allowance (output-allowance.ts). Read off the plan's and key's rows, worked out once.
   */
  metered: boolean
  /**
   * An uncapped hold may grow (`canGrow`: every model that may answer streams, none reasons
   * unseen): else the whole cap is held and sent.
   */
  grows: boolean
}

const keySettings = (l: KeyLimits): LimitSettings => ({
  ...keyCounts((name) => l[name]),
  budget:
    l.budgetMicros !== null && l.budgetPeriod
      ? { usd: l.budgetMicros / 1_000_000, period: l.budgetPeriod }
      : null,
})

/** A charge's rows and what they limit, worked out once per plan and key limits: read-only. */
interface RowSet {
  rows: LimitRow[]
  /** A token or money row: the answer is counted as it arrives and cut at the allowance. */
  metered: boolean
  /** A money row: surcharges the prices cannot cover are refused. */
  money: boolean
}

const ROWS = new WeakMap<PlanConfig, WeakMap<KeyLimits | typeof NO_KEY_LIMITS, RowSet>>()
const NO_KEY_LIMITS = {}

/**
 * The rows a reservation asks for beyond the account's request windows, and what they limit,
 * worked out once per plan (the config's object) and key limits (the key's, as authentication
 * holds them): not per request.
 */
function rowSet(plan: PlanConfig, limits: KeyLimits | null): RowSet {
  let byKey = ROWS.get(plan)
  if (!byKey) {
    byKey = new WeakMap()
    ROWS.set(plan, byKey)
  }
  let set = byKey.get(limits ?? NO_KEY_LIMITS)
  if (!set) {
    const rows = limitRows(plan, limits && keySettings(limits)).filter(
      (r) => r.resource !== 'requests' || r.scope === 'key',
    )
    set = {
      rows,
      metered: rows.some((r) => r.resource !== 'requests'),
      money: rows.some((r) => r.resource === 'microdollars'),
    }
    byKey.set(limits ?? NO_KEY_LIMITS, set)
  }
  return set
}

/** The rows a reservation asks for beyond the account's request windows (`rowSet`'s). */
export function chargeRows(plan: PlanConfig, limits: KeyLimits | null): LimitRow[] {
  return rowSet(plan, limits).rows
}

/** Each catalogue entry's tokenizer target, made once per catalogue (its family is worked out once for it). */
const TARGETS = new WeakMap<CatalogueEntry, InputTarget>()

function inputTarget(e: CatalogueEntry): InputTarget {
  let t = TARGETS.get(e)
  if (!t) {
    t = { kind: e.provider.kind, model: e.model.upstream_name ?? e.model.name }
    TARGETS.set(e, t)
  }
  return t
}

/** The client's output cap, whichever surface's name it used. */
function requestedOutput(body: unknown): number | null {
  const v = body as { max_completion_tokens?: unknown; max_tokens?: unknown; max_output_tokens?: unknown }
  const n = v.max_completion_tokens ?? v.max_tokens ?? v.max_output_tokens
  return typeof n === 'number' ? n : null
}

/** The answer's choices: chat's `n` (1 to 128, request-schema.ts); the other surfaces have none. */
function choicesOf(body: unknown): number {
  const n = (body as { n?: unknown }).n
  return typeof n === 'number' && n > 1 ? n : 1
}

/**
 * The output cap each choice is sent upstream with: the reservation's output tokens shared by the
 * choices, rounded down (an upstream then cannot generate more than was reserved). The limiter
 * refuses below `MIN_USEFUL_OUTPUT` (256) tokens for the whole answer, more than the 128 choices
 * `n` may ask for, so each choice gets at least one.
 */
export function choiceCap(r: Reservation, plan: ChargePlan): number {
  return Math.floor(r.outputTokens / plan.choices)
}

/**
 * Before admission: 400 over the plan's context cap, 400 for a surcharge a money limit cannot
 * price, and the reservation to ask for (rows beyond the account's request windows). The key's
 * model list was applied before (run.ts: the model named, and the routes).
 */
export function planCharge(
  auth: Auth,
  entry: CatalogueEntry,
  body: unknown,
  /**
   * Every model that may answer (the primary and the fallbacks the plan and key reach): the input
   * is bounded for the tokenizer of each, and the reservation's price is their dearest.
   */
  reached: CatalogueEntry[],
  /** The surface's input field (`messages`, `input`), named by a context-cap refusal. */
  inputParam: string,
): ChargePlan | Promise<ChargePlan> {
  // Not `async`: a promise (and an async function's generator and frame) only when the count needs
  // one, not on every request; a refusal is thrown at once.
  const plan = auth.plan.plan!
  const limits = auth.key.limits
  const requested = requestedOutput(body)
  const choices = choicesOf(body)
  const cap = plan.max_context_tokens ?? null
  // The plan charges tokens or money (rows beyond its request windows), or the key sets limits.
  const limited = limits !== null || rowSet(plan, null).rows.length > 0
  // An embedding model answers no output tokens.
  const modelMax = entry.model.max_output_tokens ?? 0
  if (cap === null && !limited)
    return noCharge(requested, surchargeOf(body, reached, false), choices, modelMax)
  const counted = inputTokenBound(body, reached.map(inputTarget))
  const shape = { auth, body, reached, inputParam, requested, choices, cap, limited, modelMax }
  // A promise only when a text is long (over text-bound's YIELD_CHARS, shaped before or not: an
  // agent's resent prefix still takes this turn); no turn otherwise.
  return counted instanceof Promise ? boundedLater(shape, counted) : bounded(shape, counted)
}

/** A plan no token, money or key row applies to: nothing reserved, the answer not metered. */
function noCharge(
  requested: number | null,
  surcharge: Surcharge,
  choices: number,
  modelMax: number,
): ChargePlan {
  return { charge: undefined, requested, surcharge, choices, modelMax, metered: false, grows: true }
}

/** `bounded` once the count resolves: apart, so `planCharge` makes no scope for the closure a request. */
const boundedLater = (
  shape: Parameters<typeof bounded>[0],
  counted: Promise<Awaited<ReturnType<typeof inputTokenBound>>>,
): Promise<ChargePlan> => counted.then((bound) => bounded(shape, bound))

/** `planCharge` once the input is bounded. */
function bounded(
  s: {
    auth: Auth
    body: unknown
    reached: CatalogueEntry[]
    inputParam: string
    requested: number | null
    choices: number
    cap: number | null
    limited: boolean
    modelMax: number
  },
  bound: Awaited<ReturnType<typeof inputTokenBound>>,
): ChargePlan {
  const { auth, body, reached, requested, choices, cap, modelMax } = s
  const plan = auth.plan.plan!
  const limits = auth.key.limits
  if (cap !== null && bound.text > cap)
    throw contextLengthError(auth.plan.name, cap, bound.text, s.inputParam)
  if (!s.limited) return noCharge(requested, surchargeOf(body, reached, false), choices, modelMax)
  const { rows, metered, money } = rowSet(plan, limits)
  // Input no bound covers cannot be reserved for: refused where tokens or money are limited.
  const uncounted = (body as { [UNCOUNTED_INPUT]?: string })[UNCOUNTED_INPUT]
  if (uncounted && metered) throw uncountedInputError(uncounted)
  // Surcharges the prices cannot cover are refused only where money is limited.
  const surcharge = surchargeOf(body, reached, money)
  if (!rows.length) return noCharge(requested, surcharge, choices, modelMax)
  const models = reached.map((r) => r.model)
  const grows = canGrow(models)
  const price = answeringPrice(models, surcharge, bound.tokens)
  return {
    charge: {
      rows,
      inputTokens: bound.tokens,
      // n choices each up to the cap (uncapped: a first slice each, grown as the answer arrives,
      // or up to half the tightest limit where it cannot grow — output-growth.ts): the limiter
      // clamps the total, `choiceCap` shares it out.
      wantOutput: choices * firstOutput(requested, modelMax, grows, unseenCeiling(rows, price)),
      price,
    },
    requested,
    surcharge,
    choices,
    modelMax,
    metered,
    grows,
  }
}

/** The dearest input and output prices among `models` (null when none is priced). */
export function dearest(models: ModelConfig[]): DearestPrices | null {
  let best: DearestPrices | null = null
  for (const m of models) {
    const p = dearestOf(m)
    if (!p) continue
    if (!best || (p.input >= best.input && p.output >= best.output)) best = p
    else if (p.input > best.input || p.output > best.output)
      best = { input: Math.max(best.input, p.input), output: Math.max(best.output, p.output) }
  }
  return best
}

/**
 * The dearest prices of a reservation over `models` with the request's surcharges (the tier's
 * prices, per-call tools folded into the input price over `inputTokens`); `dearest` without any.
 */
export function answeringPrice(
  models: ModelConfig[],
  surcharge: Surcharge,
  inputTokens: number,
): DearestPrices | null {
  return surcharge === NO_SURCHARGE
    ? dearest(models)
    : surchargedPrice(models, surcharge, inputTokens, unitsOf)
}

/**
 * The refusal of a charge row: 429 for requests and tokens, 402 for money, saying what is true
 * (DESIGN §11): `read` gives the row's figures again with the part that reservations of requests
 * still in flight hold (Limiter.rowStates; admission's running sums do not tell them apart). A
 * refusal is off the hot path; should that read fail, the refusal is worded without it.
 */
export async function chargeRefusalError(
  r: ChargeRefusal,
  charge: ChargeRequest,
  read: (rows: LimitRow[]) => Promise<RowState[]>,
  now: number,
  headers: Record<string, string>,
): Promise<GatewayError> {
  rowHeaders([r.state], now, headers, true)
  const s = r.state
  if (s.row.resource === 'requests') return tokenLimitError(s, r.needs, r.retryAt, now, headers)
  // A read that fails (rejects or throws) knows no holds: the refusal is not a retry-soon one, so
  // it still counts toward a suspension (refusalOf) — as it did when the admission counted it.
  let reserved = 0
  try {
    reserved = (await read([s.row]))[0]?.reserved ?? 0
  } catch {}
  // The largest max_tokens what is left (holds counted) still pays for after the input.
  const fitsOutput = Math.max(
    0,
    s.row.resource === 'tokens'
      ? s.remaining - charge.inputTokens
      : affordableOutput({ price: charge.price, inputBound: charge.inputTokens }, s.remaining),
  )
  const c = { reserved, fitsOutput: Math.min(fitsOutput, charge.wantOutput) }
  if (s.row.resource === 'microdollars') return budgetExceededError(s, r.needs, now, headers, c)
  return tokenLimitError(s, r.needs, r.retryAt, now, headers, c)
}

/**
 * After admission: the token headers, and the output cap each choice is sent upstream with when
 * it differs from what the client asked (or it asked none), announced in `x-switchyard-max-tokens`;
 * null: the client's own cap goes as it is. A capped request is sent its share of what it holds;
 * an uncapped one holds a slice and is sent its share of the most the limits could cover
 * (output-growth.ts).
 */
export function applyReservation(
  r: Reservation,
  plan: ChargePlan,
  now: number,
  headers: Record<string, string>,
): number | null {
  rowHeaders(r.states, now, headers, true)
  // A key's request windows alone bound no output: nothing to cap, and an endpoint without a cap
  // field (OpenAI's /responses/compact) must not be sent one.
  if (!plan.metered) return null
  const uncapped =
    plan.requested === null && plan.charge && plan.grows
      ? uncappedCap(r, plan.charge, plan.choices * plan.modelMax)
      : null
  const each = uncapped ? Math.floor(uncapped.cap / plan.choices) : choiceCap(r, plan)
  const by = uncapped ? uncapped.by : r.clampedBy
  if (each === plan.requested || plan.charge?.wantOutput === 0) return null
  headers['x-switchyard-max-tokens'] = String(each)
  if (by) headers['x-switchyard-max-tokens-reason'] = by
  return each
}

/**
 * A settlement, and — when it was worked out from what was relayed rather than from the
 * upstream's count — the tokens it charged, split as the request's log row shows them, so the
 * row's tokens and cost are what the account was charged.
 */
type SettledAs = Settlement & { counted?: { prompt_tokens: number; completion_tokens: number } }

/**
 * At the end, the reservation settled (DESIGN §11):
 * - to the upstream's usage (and its cost) when it reported the whole answer's;
 * - to nothing when the request failed before any generated text reached the client (a failure
 *   before any byte, or an upstream that broke before content: the client got an error);
 * - a stream without the upstream's count of the whole answer (the client left, the upstream
 *   broke after content or never reported usage): to what was relayed, never less — the input
 *   side as reserved (the conservative input bound: the upstream billed the whole prompt; a
 *   continued stream's continuation prompt too, `inputTokens`: the bound again and the prefill) plus
 *   the output tokens the answer generated, all choices, as counted on arrival under the limit
 *   (`relayedTokens`, limits/output-count.ts: an upper bound), else the UTF-8 bytes of generated
 *   text the client was sent (a token covers at least one byte on every tokenizer), or the usage the upstream did report where that
 *   is more; its cost at the answering model's highest prices for those tokens (rounded up);
 *   neither above the reservation. Tokens the upstream generated but the client never got
 *   (hidden reasoning, chunks in flight when it left) are beyond what was relayed;
 * - else (a JSON answer without usage) to the whole reservation.
 */
export function settle(
  r: Reservation,
  accountId: number,
  usage: { prompt_tokens: number; completion_tokens: number } | null,
  costMicros: number | null,
  failed: boolean,
  relayed: boolean,
  unaccounted: Unaccounted | undefined,
  /** The answering model's dearest prices (null: free); read only with `unaccounted`. */
  price: DearestPrices | null,
): SettledAs {
  if (unaccounted) {
    const nothing = unaccounted.relayedBytes === 0 && !unaccounted.aborted
    // Nothing began (a client that left while the status was held for the first item gets its
    // 499 row at what it was charged: nothing, not the estimate beside it).
    if ((failed && nothing) || (failed && !unaccounted.started))
      return unaccounted.aborted
        ? { ...settlementOf(r, accountId, 0, 0), counted: { prompt_tokens: 0, completion_tokens: 0 } }
        : settlementOf(r, accountId, 0, 0)
    const seen = unaccounted.seen
    const input = Math.max(unaccounted.inputTokens ?? r.tokens - r.outputTokens, seen?.prompt_tokens ?? 0)
    // Counted in tokens as it arrived where a limit applies (OutputAllowance), else its bytes.
    const output = Math.max(
      unaccounted.relayedTokens ?? unaccounted.relayedBytes,
      seen?.completion_tokens ?? 0,
    )
    const tokens = Math.min(r.tokens, input + output)
    return {
      ...settlementOf(r, accountId, tokens, Math.min(r.micros, highestCostMicros(price, input, output))),
      counted: {
        prompt_tokens: Math.min(input, tokens),
        completion_tokens: tokens - Math.min(input, tokens),
      },
    }
  }
  if (usage) return settlementOf(r, accountId, usage.prompt_tokens + usage.completion_tokens, costMicros ?? 0)
  if (failed && !relayed) return settlementOf(r, accountId, 0, 0)
  return settlementOf(r, accountId, r.tokens, r.micros)
}

/** A settlement of `r` (a function of its own: `settle` makes no closure and scope a request). */
const settlementOf = (r: Reservation, accountId: number, tokens: number, micros: number): Settlement => ({
  handle: r.handle,
  accountId,
  tokens,
  micros,
})
