/**
 * @module
 * The demo's failure on demand (DESIGN §10), so a newcomer can watch a retry and a fallback
 * happen offline: a demo model whose name starts with `flaky` fails with 503 overloaded whenever
 * the latest user message says `fail` — before any byte, streamed or not, as an overloaded
 * provider would. Its `fallbacks` then answer (`x-switchyard-attempts` counts the tries).
 *
 * @example
 * flakyFailure({ model: 'flaky', messages: [{ role: 'user', content: 'please fail' }] })  // GatewayError 503
 */
import type { ChatRequest } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { withFacts } from '../failure-facts.ts'
import { lastUserMessage, messageText } from './text.ts'

export function flakyFailure(req: ChatRequest): GatewayError | null {
  if (!req.model.startsWith('flaky')) return null
  if (!/\bfail/i.test(messageText(lastUserMessage(req.messages)))) return null
  const err = new GatewayError(
    503,
    'upstream_overloaded',
    `Demo model '${req.model}' failed on purpose: the message says "fail".`,
  )
  return withFacts(err, { status: 503 })
}
