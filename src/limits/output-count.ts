/**
 * @module
 * Generated text counted as it arrives (DESIGN §11): an upper bound of the output tokens a
 * provider bills for it, per provider kind, cheap enough to run on every chunk of a stream under
 * a token or money limit (and never on a stream without one).
 *
 * Kind `openai`: the o200k count (limits/o200k.ts), the encoding OpenAI's current models bill.
 * Anthropic, Gemini and the demo: the calibrated bound of the input count (limits/text-bound.ts
 * `shapeBound`, o200k × the family's factor plus its per-class weights, never under the provider's
 * count on the measured corpus), so an answer is not cut at a quarter of its cap as one token a
 * byte would cut it. Until the tables have loaded, one token a UTF-8 byte (never fewer).
 *
 * Chunks are counted one at a time and summed: byte-pair merges never cross a chunk's edge in
 * that sum, so it is never below the count of the whole text in practice (one token per
 * fragment at worst), and each chunk's bound is rounded up and carries the family's one token
 * a text: the sum errs upward, the direction an upper bound may err in. Chunk texts are not kept
 * in the input count's cache (they do not repeat).
 */
import type { ProviderKind } from '../config/index.ts'
import { loadedO200k, loadO200k } from './o200k.ts'
import { familyOf, shapeBound, textShape } from './text-bound.ts'

/**
 * Starts loading the o200k tables (megabytes: only when a limit applies). Until they are loaded
 * a text counts its bytes, which is never fewer tokens.
 */
export async function prepareOutputCount(): Promise<void> {
  await loadO200k()
}

/** Output tokens `text` may cost on a provider of `kind`, never fewer than it bills. */
export function outputTokenCount(text: string, kind: ProviderKind): number {
  if (text === '') return 0
  const o200k = loadedO200k()
  if (o200k === null) return Buffer.byteLength(text)
  if (kind === 'openai') return o200k(text).tokens
  return shapeBound(textShape(text), familyOf(kind))
}
