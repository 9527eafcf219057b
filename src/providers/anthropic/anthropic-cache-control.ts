/**
 * @module
 * Prompt-cache breakpoints on the chat → anthropic route. OpenAI-format clients mark them the way
 * LiteLLM and OpenRouter accept: `cache_control` on a content part, on a whole message (the
 * breakpoint goes on the message's last block) or on a function tool; each reaches the Anthropic
 * block, system text or tool it belongs to, as written. Without them an agent's turns on this
 * route would pay the whole prefix every turn.
 *
 * @example
 * withCacheControl({ type: 'text', text: 'long system prompt' }, part, 'messages[0].content[0]')
 * // { type: 'text', text: 'long system prompt', cache_control: { type: 'ephemeral' } }
 */
import { GatewayError } from '../../util/errors.ts'
import type { AnthropicCacheControl } from './anthropic-types.ts'

/** The holder's `cache_control`: an object with a string `type`; absent (or null) → undefined. */
export function cacheControlOf(holder: object, param: string): AnthropicCacheControl | undefined {
  const value = (holder as { cache_control?: unknown }).cache_control
  if (value == null) return undefined
  if (
    typeof value !== 'object' ||
    Array.isArray(value) ||
    typeof (value as { type?: unknown }).type !== 'string'
  ) {
    throw new GatewayError(
      400,
      'invalid_type',
      `${param}.cache_control: expected an object such as {"type": "ephemeral"}.`,
      { param: `${param}.cache_control` },
    )
  }
  return value as AnthropicCacheControl
}

/** `block`, carrying the holder's `cache_control` when it has one. */
export function withCacheControl<B extends object>(block: B, holder: object, param: string): B {
  const cc = cacheControlOf(holder, param)
  return cc === undefined ? block : { ...block, cache_control: cc }
}

/** A message-level `cache_control` goes on the last of the blocks the message became. */
export function markLast<B extends object>(blocks: B[], message: object, param: string): B[] {
  const cc = cacheControlOf(message, param)
  if (cc === undefined || blocks.length === 0) return blocks
  const last = blocks.length - 1
  return blocks.map((b, i) => (i === last ? { ...b, cache_control: cc } : b))
}
