/**
 * @module
 * The building blocks of the `switchyard.yaml` schema: closed objects, named maps, header fields,
 * counts and durations with their bounds (each bound says why, for the error past it:
 * schema-problems.ts).
 *
 * @example
 * T.Object({ timeout_ms: T.Optional(Ms), days: Days }, Closed)
 */
import { type StringOptions, Type as T, type TSchema } from '@sinclair/typebox'

export const Closed = { additionalProperties: false } as const

/**
 * A string that is a secret or may hold one (a token, a key, a header, a URL with a password): a
 * problem with it says its length, never its value (schema-problems.ts). Declare every such
 * setting with it, so the next one is marked where it is declared.
 */
export const Secret = (options: StringOptions = {}) => T.String({ ...options, secret: true })

/**
 * A map whose every key must match `pattern`. `T.Record` alone becomes `patternProperties` only,
 * which never looks at a key outside the pattern (nor at its value), so the map is closed too.
 * `keyName` and `keyRule` word the error (schema-problems.ts).
 */
export function NamedMap<V extends TSchema>(keyName: string, pattern: string, keyRule: string, value: V) {
  return T.Record(T.String({ pattern }), value, { additionalProperties: false, keyName, keyRule })
}

/** An HTTP field name (RFC 9110 token): anything else makes `new Headers()` throw on every request. */
export const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"
/** A field value without CR, LF or NUL (which would end the header or be refused by fetch). */
const HEADER_VALUE = '^[^\\r\\n\\0]*$'
/** A header's value: a secret, as an `Authorization` one is. */
export const HeaderValue = Secret({ pattern: HEADER_VALUE })

export const PositiveInt = T.Integer({ minimum: 1 })
export const NullableCount = T.Union([T.Integer({ minimum: 1 }), T.Null()])

/** The longest timer the runtime keeps: a longer `setTimeout` fires after 1 ms instead (about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1
/** A century: the longest plan or retention, as `--days` allows; every date it leads to is valid. */
export const MAX_DAYS = 36_500
/** `maxWhy` words the error past the maximum (schema-problems.ts). */
export const TIMER_WHY = 'the longest timer the runtime keeps (2^31-1 ms, about 24.8 days)'
/** A duration in milliseconds, used as a timer. */
export const Ms = T.Integer({ minimum: 1, maximum: MAX_TIMER_MS, maxWhy: TIMER_WHY })
/** A duration in seconds that becomes a timer: the same bound. */
export const timerSeconds = (minimum: number) =>
  T.Integer({ minimum, maximum: Math.floor(MAX_TIMER_MS / 1000), maxWhy: TIMER_WHY })
/**
 * A duration in seconds that is only added to times (a circuit's or a key's rest, a suspension,
 * its window, a reservation's life), never a timer: a century at most, every date it leads to valid.
 */
export const spanSeconds = (minimum: number) =>
  T.Integer({ minimum, maximum: MAX_DAYS * 86_400, maxWhy: 'a century, the longest plan' })
export const Days = T.Integer({ minimum: 1, maximum: MAX_DAYS, maxWhy: 'a century, as --days allows' })
