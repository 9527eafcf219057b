/**
 * @module
 * When a plan set or renewed now ends, bounded so that every view of the account stays a date.
 */
import { DAY_MS, iso, LATEST_TIME } from '../util/clock.ts'
import { GatewayError } from '../util/errors.ts'

/**
 * A plan's end: `expiresAt` as given, else `length` days from `from` (null: no end). Never past
 * `LATEST_TIME`: 400 naming the field that asked for it. Renewing adds to the current end, so
 * without the bound repeated renewals ran past the largest JavaScript Date and every view of the
 * account failed.
 */
export function planEnd(
  from: number,
  length: number | null,
  expiresAt: number | undefined,
  renewing: boolean,
) {
  if (expiresAt !== undefined) {
    if (expiresAt > LATEST_TIME) {
      throw new GatewayError(400, 'invalid_value', `expires_at: must be no later than ${iso(LATEST_TIME)}.`, {
        param: 'expires_at',
      })
    }
    // An end already past (a year mistyped) expired the plan at once and started its downgrade
    // back then, before the account existed; `--days 0` is the way to end a plan now.
    if (expiresAt < from) {
      throw new GatewayError(
        400,
        'invalid_value',
        `expires_at: ${iso(expiresAt)} is in the past; give a later time, or --days 0 to end the plan now.`,
        { param: 'expires_at' },
      )
    }
    return expiresAt
  }
  if (length === null) return null
  const end = from + length * DAY_MS
  if (end <= LATEST_TIME) return end
  const room = Math.max(0, Math.floor((LATEST_TIME - from) / DAY_MS))
  throw new GatewayError(
    400,
    'invalid_value',
    renewing
      ? `days: renewing by ${length} ${length === 1 ? 'day' : 'days'} would end the plan after ${iso(LATEST_TIME)}, the latest end a plan may have; it runs to ${iso(from)} now, so ${room} more days at most.`
      : `days: ${length} days would end the plan after ${iso(LATEST_TIME)}, the latest end a plan may have; ${room} days at most.`,
    { param: 'days' },
  )
}
