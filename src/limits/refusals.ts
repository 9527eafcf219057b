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
 * - 400 `context_length_exceeded` naming the plan and its `max_context_tokens`.
 * - 403 `model_not_allowed` naming the models the key may use.
 */
import { GatewayError } from '../util/errors.ts'
import { formatUsd } from './pricing.ts'
import type { LimitRow, RowState } from './rows.ts'

const WINDOW_NAME: Record<string, string> = {
  'tokens:minute': 'tokens per minute (tpm)',
  'tokens:day': 'tokens per day (tpd)',
  'requests:minute': 'requests per minute (rpm)',
  'requests:day': 'requests per day (rpd)',
}

/** `tokens per minute (tpm) of this key`, `monthly budget of the account` ... */
export function limitName(row: LimitRow): string {
  const owner = row.scope === 'key' ? 'this key' : 'the account'
  if (row.resource === 'microdollars')
    return `${row.period === 'day' ? 'daily' : `${row.period}ly`} budget of ${owner}`
  return `${WINDOW_NAME[`${row.resource}:${row.window}`]} of ${owner}`
}

function retryHeaders(headers: Record<string, string>, ms: number): Record<string, string> {
  const wait = Math.max(1, Math.ceil(ms))
  return { ...headers, 'retry-after': String(Math.ceil(wait / 1000)), 'retry-after-ms': String(wait) }
}

/**
 * 429 for a token row. `needs`: the tokens the smallest useful version of this request reserves
 * (input bound + minimal output); `retryAt`: when the window will have room (null: it never will).
 */
export function tokenLimitError(
  s: RowState,
  needs: number,
  retryAt: number | null,
  now: number,
  headers: Record<string, string>,
): GatewayError {
  const name = limitName(s.row)
  if (needs > s.row.capacity) {
    return new GatewayError(
      429,
      'rate_limit_exceeded',
      `Request too large for the ${name}: limit ${s.row.capacity}, this request needs at least ${needs} (its input, counted conservatively as one token per byte, plus a minimal answer). Send a smaller request or raise the limit.`,
      { headers },
    )
  }
  const ms = Math.max(1, (retryAt ?? now) - now)
  return new GatewayError(
    429,
    'rate_limit_exceeded',
    `Rate limit reached for ${name}: limit ${s.row.capacity}, used ${s.used}, this request needs ${needs}. Enough frees in ${(ms / 1000).toFixed(3)} s; retry after that or upgrade the plan.`,
    { headers: retryHeaders(headers, ms) },
  )
}

/** 402 for a money row: the period's budget cannot pay for this request. */
export function budgetExceededError(
  s: RowState,
  needs: number,
  now: number,
  headers: Record<string, string>,
): GatewayError {
  if (needs > s.row.capacity) {
    // Like the token rows' "Request too large": waiting for the period to end would not help.
    return new GatewayError(
      402,
      'budget_exceeded',
      `Request too large for the ${limitName(s.row)}: it may cost up to ${formatUsd(needs)}, more than the whole budget of ${formatUsd(s.row.capacity)}. Send a smaller request (shorter input or a lower max_tokens), use a cheaper model, or raise the budget.`,
      { type: 'billing_error', headers },
    )
  }
  const resetsAt = s.resetAt ?? now
  const when = new Date(resetsAt).toISOString()
  return new GatewayError(
    402,
    'budget_exceeded',
    `The ${limitName(s.row)} is spent: ${formatUsd(s.used)} of ${formatUsd(s.row.capacity)} used, and this request may cost up to ${formatUsd(needs)}. The budget resets at ${when}; retry then, use a cheaper model, or raise the budget.`,
    { type: 'billing_error', headers: retryHeaders(headers, resetsAt - now) },
  )
}

/**
 * 400 when the input is over the plan's `max_context_tokens`. `tokens`: the count so far (counting
 * stops past the cap, so the input is at least this); `param`: the surface's input field.
 */
export function contextLengthError(plan: string, cap: number, tokens: number, param: string): GatewayError {
  return new GatewayError(
    400,
    'context_length_exceeded',
    `This request's input is at least ${tokens} tokens, over the ${cap}-token context limit of the plan '${plan}' (max_context_tokens). Shorten the conversation or upgrade the plan.`,
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
