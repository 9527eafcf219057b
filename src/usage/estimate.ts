/**
 * @module
 * Token counts for a stream whose client disconnected. The upstream's own usage arrives only at
 * the end of a stream, which a disconnect cancels, so the record would say 0 tokens although
 * most of the answer may have been sent. The counts are then estimated at 4 characters (UTF-8
 * bytes of the answer) a token (OpenAI's rule of thumb for English) from what the gateway relayed
 * and from the request's text; whatever usage the upstream did report is kept where it is larger.
 * A 499 record's tokens are always such an estimate. (Settling a token reservation does not use
 * this estimate but a bound: pipeline/charge.ts.)
 *
 * @example
 * disconnectedUsage(null, 1_200, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }) // 1,200 bytes relayed
 * // → { prompt_tokens: 2, completion_tokens: 300 }
 */
import type { ChatCompletionChunk, Usage } from '../operations/chat.ts'

const CHARS_PER_TOKEN = 4

export const estimateTokens = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN)

export function disconnectedUsage(
  seen: Pick<Usage, 'prompt_tokens' | 'completion_tokens'> | null,
  relayedBytes: number,
  /** The request body as parsed (the surface's view of it). */
  requestBody: unknown,
): { prompt_tokens: number; completion_tokens: number } {
  return {
    prompt_tokens: seen?.prompt_tokens || estimateTokens(requestTextChars(requestBody)),
    completion_tokens: Math.max(seen?.completion_tokens ?? 0, estimateTokens(relayedBytes)),
  }
}

/**
 * Characters of text in a parsed request body: every string value but the model id (roles
 * included, as tokenizers count them too). The parsed value, not the text: parsing a 10 MB body
 * again when its client left cost a second copy of it (DESIGN §16).
 */
export function requestTextChars(body: unknown): number {
  let parsed = body
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const { model: _model, ...rest } = parsed as Record<string, unknown>
    parsed = rest
  }
  // The body passed validation (at most 100 levels), so an explicit stack is only tidiness.
  let chars = 0
  const stack: unknown[] = [parsed]
  while (stack.length) {
    const v = stack.pop()
    if (typeof v === 'string') chars += v.length
    else if (Array.isArray(v)) stack.push(...v)
    else if (v && typeof v === 'object') stack.push(...Object.values(v))
  }
  return chars
}

/**
 * UTF-8 bytes of generated text in a chunk: content, refusal, reasoning (as providers name it),
 * tool names and arguments. Bytes, not characters: a token covers at least one byte of text on
 * every tokenizer (limits/estimate-tokens.ts), so they bound the tokens relayed.
 */
export function chunkTextBytes(chunk: ChatCompletionChunk): number {
  let n = 0
  for (const { delta } of chunk.choices) {
    if (!delta) continue
    const d = delta as Record<string, unknown>
    for (const k of ['content', 'refusal', 'reasoning_content', 'reasoning']) {
      const v = d[k]
      if (typeof v === 'string') n += utf8Bytes(v)
    }
    for (const t of delta.tool_calls ?? []) {
      const f = t?.function
      if (typeof f?.name === 'string') n += utf8Bytes(f.name)
      if (typeof f?.arguments === 'string') n += utf8Bytes(f.arguments)
    }
  }
  return n
}

/** UTF-8 bytes of a string, counted natively. */
export const utf8Bytes = (s: string): number => Buffer.byteLength(s)
