/**
 * @module
 * Rate limits in one place: the limiter's contract (types), window figures, the rate-limit
 * headers and 429, the suspension policy, and the refusal when the limiter is unreachable.
 * The backends that keep the windows are in `store/` (sqlite, postgres, redis).
 */
export { admitStates, formatDuration, rateLimitError, rateLimitHeaders, type Windows } from './headers.ts'
export { suspendedError, suspensionPolicy } from './suspension.ts'
export * from './types.ts'
export { limiterUnavailable } from './unavailable.ts'
export { consumed, unlimited, windowOf, windowView } from './windows.ts'
