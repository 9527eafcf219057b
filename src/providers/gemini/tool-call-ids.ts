/**
 * @module
 * Tool call ids for Gemini function calls, which have none of their own.
 *
 * Gemini 3 answers a function call with a `thoughtSignature` and rejects the next turn (400) if
 * the call comes back without it. OpenAI clients only send back what they received — the tool
 * call's `id` — so the signature rides inside the id: `call_<24 hex>_ts<padding><base64url>`.
 * Ids without one (other providers, older turns) get Google's documented bypass value instead.
 * The id stays within `[A-Za-z0-9_-]`, so the conversation can still move to Anthropic.
 */

/** Google's documented value for function calls whose real signature is unknown. */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator'

const SIGNED_ID = /^call_[0-9a-f]{24}_ts([0-2])([A-Za-z0-9_-]+)$/

/**
 * @example
 * toolCallId() // 'call_3f9c…' (24 hex digits)
 * toolCallId('EqUCCq+/==') // 'call_3f9c…_ts2EqUCCq-_'
 */
export function toolCallId(thoughtSignature?: string): string {
  const id = `call_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`
  if (!thoughtSignature) return id
  const padding = /=*$/.exec(thoughtSignature)![0].length
  if (padding > 2 || !/^[A-Za-z0-9+/]+=*$/.test(thoughtSignature)) return id // not base64: cannot carry it
  const body = thoughtSignature
    .slice(0, thoughtSignature.length - padding)
    .replaceAll('+', '-')
    .replaceAll('/', '_')
  return `${id}_ts${padding}${body}`
}

/** The thought signature carried by an id from `toolCallId`, if any. */
export function thoughtSignatureOf(id: string | undefined): string | undefined {
  const match = id ? SIGNED_ID.exec(id) : null
  if (!match) return undefined
  return match[2]!.replaceAll('-', '+').replaceAll('_', '/') + '='.repeat(Number(match[1]))
}
