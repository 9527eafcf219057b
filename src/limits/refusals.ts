/**
 * @module
 * The refusals of tokens and money (DESIGN §11), in OpenAI's error body; the Messages surface maps
 * them to Anthropic's types as it does every error (429 `rate_limit_error`, 402 `billing_error`,
 * 403 `permission_error`, 400 `invalid_request_error`):
 * - 429 `rate_limit_exceeded` naming the token limit (`tokens per minute (tpm)` ...), with
 *   `retry-after` / `retry-after-ms` until enough frees — or, like OpenAI's "Request too large",
 *   without them when the request could never fit the limit.
 * - 402 `budget_exceeded` naming the budget and when its period ends (`retry-after` until then) —
 *   or, when even the smallest version of the request costs more than the whole budget, saying so
 *   without them.
 * Both say what is true of the row (`refusalReason`): its settled use apart from what requests
 * still in flight hold; when only those holds stand in the way, a short `retry-after`
 * (HOLD_RETRY_MS) and `x-should-retry: true`; when a lower max_tokens would fit, how much is left;
 * when something is left but less than this request needs at least, both amounts (never "spent":
 * that is said only when the settled use reached the limit).
 * - 400 `context_length_exceeded` naming the plan and its `max_context_tokens`.
 * - 403 `model_not_allowed` naming the models the key may use.
 */
import { windowName } from '../config/limit-settings.ts'
import { GatewayError } from '../util/errors.ts'
import { formatUsd } from './pricing.ts'
import type { LimitRow, RowState } from './rows.ts'

/** `tokens per minute (tpm) of this key`, `monthly budget of the account` ... */
export function limitName(row: LimitRow): string {
  const owner = row.scope === 'key' ? 'this key' : 'the account'
  if (row.resource === 'microdollars')
    return `${row.period === 'day' ? 'daily' : `${row.period}ly`} budget of ${owner}`
  return `${windowName(row.resource, row.window)} of ${owner}`
}

function retryHeaders(headers: Record<string, string>, ms: number): Record<string, string> {
  const wait = Math.max(1, Math.ceil(ms))
  return { ...headers, 'retry-after': String(Math.ceil(wait / 1000)), 'retry-after-ms': String(wait) }
}

/**
 * The wait a refusal caused by holds in flight asks for (well under the SDKs' 60 s cap, so their
 * automatic retry takes it): a reservation frees when its request ends and the usage flush
 * (`usage.flush_ms`, 200 ms by default) settles it to what it used; when that is is not known.
 */
export const HOLD_RETRY_MS = 5_000

/**
 * The refusal asks for a retry within seconds (`x-should-retry: true`): only holds of requests in
 * flight stood in the way. Such a refusal does not count toward a suspension (pipeline/admit.ts).
 */
export const retriesSoon = (e: GatewayError): boolean => e.headers?.['x-should-retry'] === 'true'

/** What the refusing row's figures say beyond the admission's own (charge.ts gathers it). */
export interface RefusalContext {
  /** The part of the row's use held by reservations of requests still in flight (RowState.reserved). */
  reserved: number
  /** The largest output cap (max_tokens) that fits what is left now, 0 when none would. */
  fitsOutput: number
}

const NO_CONTEXT: RefusalContext = { reserved: 0, fitsOutput: 0 }

/**
 * Why a row that refused did (DESIGN §11): `holds` — what requests that ended settled leaves room
 * for this request, only the reservations of requests still in flight do not; `lower` — what is
 * left (holds counted) fits this request with a lower max_tokens; `short` — the settled use is
 * under the limit but, holds released or not, less than the smallest version of this request needs
 * is left: only the window (or period) rolling lets it in. Its words say by `remaining` whether
 * something is left now (a smaller request may fit now) or holds in flight hold the rest
 * (`shortText`); `spent` — the settled use reached the limit.
 */
export type RefusalReason = 'holds' | 'lower' | 'short' | 'spent'

export function refusalReason(s: RowState, needs: number, c: RefusalContext): RefusalReason {
  const reserved = Math.min(c.reserved, s.used)
  if (reserved > 0 && s.used - reserved + needs <= s.row.capacity) return 'holds'
  if (c.fitsOutput > 0) return 'lower'
  return s.used - reserved < s.row.capacity ? 'short' : 'spent'
}

/** `used 2900 (2600 by requests that ended, 300 held by requests still in flight)` */
function usedText(used: number, reserved: number): string {
  const held = Math.min(reserved, used)
  return held > 0
    ? `used ${used} (${used - held} by requests that ended, ${held} held by requests still in flight)`
    : `used ${used}`
}

/**
 * A `short` refusal's middle, by what is left now (`remaining`): some, which a smaller request may
 * fit now; or none, holds in flight holding the rest, which leave `afterHolds` (less than this
 * request needs) when they end. `amount` formats a figure (tokens, or money).
 */
function shortText(s: RowState, reserved: number, amount: (n: number) => string, unit: string): string {
  if (s.remaining > 0) return `${amount(s.remaining)} ${unit} left: a smaller request may fit now.`
  const afterHolds = s.row.capacity - (s.used - Math.min(reserved, s.used))
  return `requests still in flight hold the rest, and when they end at most ${amount(afterHolds)} ${unit} left, less than this request needs.`
}

const HOLDS_TEXT =
  'Requests still in flight hold it (a request reserves its highest cost when admitted and is settled to what it used when it ends): retry in a few seconds.'

/** How a row's refusal reads, for each reason (`refusalReason`), and how long its retry waits. */
interface RefusalWords {
  /** The request could never fit the row: no retry headers, waiting would not help. */
  tooLarge: () => string
  holds: () => string
  lower: () => string
  short: () => string
  spent: () => string
  /** Until the row has room (`lower`, `spent`), and the shorter wait for holds to settle, in ms. */
  waitMs: number
  holdsWaitMs: number
}

type Refuse = (message: string, headers: Record<string, string>) => GatewayError

const tokensRefused: Refuse = (message, headers) =>
  new GatewayError(429, 'rate_limit_exceeded', message, { headers })

const budgetRefused: Refuse = (message, headers) =>
  new GatewayError(402, 'budget_exceeded', message, { type: 'billing_error', headers })

/**
 * The refusal of a token or money row (`refuse`: its status and code): too large ever; only held
 * by requests in flight (a short retry, `x-should-retry: true`); or spent, short of what this
 * request needs, or fitting a lower max_tokens (retry once the row has room for this request).
 */
function rowRefusal(
  refuse: Refuse,
  s: RowState,
  needs: number,
  headers: Record<string, string>,
  c: RefusalContext,
  words: RefusalWords,
): GatewayError {
  if (needs > s.row.capacity) return refuse(words.tooLarge(), headers)
  const reason = refusalReason(s, needs, c)
  if (reason === 'holds') {
    return refuse(words.holds(), { ...retryHeaders(headers, words.holdsWaitMs), 'x-should-retry': 'true' })
  }
  return refuse(words[reason](), retryHeaders(headers, words.waitMs))
}

/**
 * 429 for a token row. `needs`: the tokens the smallest useful version of this request reserves
 * (input bound + minimal output); `retryAt`: when the window will have room (null: it never will).
 * `c`: the holds in flight and the cap that would fit now (without it: none known).
 */
export function tokenLimitError(
  s: RowState,
  needs: number,
  retryAt: number | null,
  now: number,
  headers: Record<string, string>,
  c: RefusalContext = NO_CONTEXT,
): GatewayError {
  const name = limitName(s.row)
  const ms = Math.max(1, (retryAt ?? now) - now)
  const head = () =>
    `Rate limit reached for ${name}: limit ${s.row.capacity}, ${usedText(s.used, c.reserved)}, this request needs at least ${needs}.`
  const later = (lower: string) =>
    `${head()}${lower} Enough frees in ${(ms / 1000).toFixed(3)} s; retry after that or upgrade the plan.`
  return rowRefusal(tokensRefused, s, needs, headers, c, {
    tooLarge: () =>
      `Request too large for the ${name}: limit ${s.row.capacity}, this request needs at least ${needs} (its input as the gateway's bound for the model's tokenizer counts it, plus a minimal answer). Send a smaller request or raise the limit.`,
    holds: () => `${head()} ${HOLDS_TEXT}`,
    lower: () =>
      later(` ${s.remaining} are left: a lower max_tokens (at most ${c.fitsOutput}) would fit now.`),
    short: () => {
      const text = shortText(s, c.reserved, String, 'are')
      return later(s.remaining > 0 ? ` ${text}` : ` Nothing is left now: ${text}`)
    },
    spent: () => later(''),
    waitMs: ms,
    holdsWaitMs: Math.min(ms, HOLD_RETRY_MS),
  })
}

/** 402 for a money row: the period's budget cannot pay for this request. */
export function budgetExceededError(
  s: RowState,
  needs: number,
  now: number,
  headers: Record<string, string>,
  c: RefusalContext = NO_CONTEXT,
): GatewayError {
  const name = limitName(s.row)
  const held = Math.min(c.reserved, s.used)
  const spent = formatUsd(s.used - held)
  const resetsAt = s.resetAt ?? now
  const when = new Date(resetsAt).toISOString()
  const holds = held > 0 ? ` and ${formatUsd(held)} held by requests still in flight` : ''
  const left = `${formatUsd(Math.max(0, s.remaining))} left of ${formatUsd(s.row.capacity)} (${spent} spent${holds})`
  return rowRefusal(budgetRefused, s, needs, headers, c, {
    // Like the token rows' "Request too large": waiting for the period to end would not help.
    tooLarge: () =>
      `Request too large for the ${name}: it needs at least ${formatUsd(needs)} (its input and a minimal answer), more than the whole budget of ${formatUsd(s.row.capacity)}. Send a smaller request (shorter input or a lower max_tokens), use a cheaper model, or raise the budget.`,
    holds: () =>
      `The ${name} is not spent: ${spent} of ${formatUsd(s.row.capacity)} spent, but ${formatUsd(held)} of it is held by requests still in flight, and this request needs at least ${formatUsd(needs)}. ${HOLDS_TEXT}`,
    lower: () =>
      `What is left of the ${name} cannot cover this request: ${left}, and this request needs at least ${formatUsd(needs)}. A lower max_tokens (at most ${c.fitsOutput}) would fit; or use a cheaper model, or wait until the budget resets at ${when}.`,
    // Less is left (holds released or not) than this request's input and a minimal answer cost: a
    // smaller request fits now, or once the holds end when none is left now; this one not before
    // the period ends (its settled spend only grows until then).
    short: () =>
      s.remaining > 0
        ? `What is left of the ${name} cannot cover this request: ${left}, and this request needs at least ${formatUsd(needs)} (its input and a minimal answer). A smaller request (a shorter input) or a cheaper model may fit now; this one fits again when the budget resets at ${when}, or raise the budget.`
        : `What is left of the ${name} cannot cover this request: nothing is left of ${formatUsd(s.row.capacity)} now (${spent} spent${holds}); ${shortText(s, c.reserved, formatUsd, 'is')} This request needs at least ${formatUsd(needs)} (its input and a minimal answer): a smaller request or a cheaper model may fit once they end; this one fits again when the budget resets at ${when}, or raise the budget.`,
    spent: () =>
      `The ${name} is spent: ${spent} of ${formatUsd(s.row.capacity)} used${holds}, and this request needs at least ${formatUsd(needs)}. The budget resets at ${when}; retry then, use a model without a price, or raise the budget.`,
    waitMs: resetsAt - now,
    holdsWaitMs: HOLD_RETRY_MS,
  })
}

/**
 * 400 when the input is over the plan's `max_context_tokens`. `tokens`: the input bound
 * (estimate-tokens.ts, the same admission reserves); `param`: the surface's input field.
 */
export function contextLengthError(plan: string, cap: number, tokens: number, param: string): GatewayError {
  return new GatewayError(
    400,
    'context_length_exceeded',
    `This request's input counts ${tokens} tokens (the gateway's bound for this model's tokenizer), over the ${cap}-token context limit of the plan '${plan}' (max_context_tokens). Shorten the conversation or upgrade the plan.`,
    { param },
  )
}

/**
 * 400 `unsupported_value` when a token or money limit applies and the input holds what the
 * gateway cannot count (estimate-tokens.ts `UNCOUNTED_INPUT`): no reservation would bound it.
 */
export function uncountedInputError(param: string): GatewayError {
  return new GatewayError(
    400,
    'unsupported_value',
    `The gateway cannot count the input tokens of ${param} (content it never sees, whose length sets what the provider bills), and this key's plan limits tokens or money, which need the input counted before the request runs. Send the content inline (inlineData, or text), or use a key without token or money limits.`,
    { param },
  )
}

/** 403 when the model is outside the key's own list. */
export function modelNotAllowedError(model: string, allowed: string[]): GatewayError {
  return new GatewayError(
    403,
    'model_not_allowed',
    `This API key may not use the model '${model}'. It may use: ${allowed.join(', ')}. Use one of those, or ask the administrator to change the key's models.`,
    { param: 'model' },
  )
}
