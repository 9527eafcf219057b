/**
 * @module
 * The demo's answer bound (README): a whole answer — its text, every tool call's name and
 * arguments, its JSON, all `n` choices together — is at most `MAX_ANSWER_CHARS` characters. Text
 * past it is cut (finish_reason `length`); a tool call or JSON answer whose smallest valid form
 * does not fit is refused with 400 `answer_too_large`, saying what asked for more. The refusal is
 * the request's own fault: it is never retried.
 *
 * @example
 * choiceBudget(4)                                          // 8192
 * answerTooLarge("the JSON object in the user's message is 40000 characters", 1)  // GatewayError 400
 */
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'
import type { SchemaTooLarge } from './json-from-schema.ts'

/**
 * The longest answer a demo model gives, in characters. It echoes the prompt, so without a cap a
 * 400 KB prompt made a 400 KB answer per choice — 30 MB of chunk objects per stream, 2.8 GB for
 * 100 of them; and a tool schema's `minLength` or `minItems` made whatever size it named.
 */
export const MAX_ANSWER_CHARS = 32_768

/** What each of `n` identical choices may hold. */
export function choiceBudget(n: number): number {
  return Math.floor(MAX_ANSWER_CHARS / Math.max(1, n))
}

/** The 400 for an answer that cannot fit: `why` ends the sentence "…, and <why>". */
export function answerTooLarge(why: string, n: number): GatewayError {
  const each = n > 1 ? ` (${choiceBudget(n)} for each of ${n} choices)` : ''
  const fewer = n > 1 ? ', or for fewer choices' : ''
  return new GatewayError(
    400,
    'answer_too_large',
    `The demo model answers at most ${MAX_ANSWER_CHARS} characters${each}, and ${why}. Ask for less${fewer}.`,
  )
}

/** The 400 for a schema whose smallest value does not fit; `whose` names the schema. */
export function schemaTooLarge(err: SchemaTooLarge, whose: string, n: number): GatewayError {
  const keyword = err.keyword ? `: ${err.keyword}` : ''
  return answerTooLarge(
    `the smallest value ${whose} allows does not fit (at ${clip(err.pointer || '/')}${keyword})`,
    n,
  )
}
