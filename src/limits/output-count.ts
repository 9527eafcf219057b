/**
 * @module
 * Generated text counted as it arrives (DESIGN §11): an upper bound of the output tokens a
 * provider bills for it, per provider kind, cheap enough to run on every chunk of a stream under
 * a token or money limit (and never on a stream without one).
 *
 * Kind `openai`: the o200k count (limits/o200k.ts), the encoding OpenAI's current models bill.
 * Anthropic and Gemini: the calibrated bound of the input count (limits/text-bound.ts
 * `shapeBound`, o200k × the family's factor plus its per-class weights, never under the provider's
 * count on the measured corpus), so an answer is not cut at a quarter of its cap as one token a
 * byte would cut it. The demo: its own count exactly (`DEMO_CHARS_PER_TOKEN`), as the demo
 * model counts what it answers (providers/demo/text.ts) — a first-party tokenizer, known as
 * o200k is.
 *
 * Chunks are counted one at a time and summed: byte-pair merges never cross a chunk's edge in
 * that sum, so it is never below the count of the whole text in practice (one token per
 * fragment at worst), and each chunk's bound is rounded up and carries the family's one token
 * a text: the sum errs upward, the direction an upper bound may err in. Chunk texts are not kept
 * in the input count's cache (long ones do not repeat); short ones have a small map of their own.
 */
import type { ProviderKind } from '../config/index.ts'
import { setBounded } from '../util/map.ts'
import { countO200k } from './o200k.ts'
import { familyOf, shapeBound, textShape } from './text-bound.ts'

/**
 * o200k counts of short chunk texts, which do repeat: most deltas are a token or a word (" the",
 * ","), and a map lookup costs a tenth of encoding one (~1 µs). At most `SHORT_TEXTS` entries of at
 * most `SHORT_TEXT` UTF-16 units (a few hundred KB), emptied when full.
 */
const shortCounts = new Map<string, number>()
const SHORT_TEXT = 16
const SHORT_TEXTS = 8_192

/** The demo model's tokens: about four characters (UTF-16 units) each, a text's rounded up. */
export const DEMO_CHARS_PER_TOKEN = 4

/** The demo's count of `chars` characters (`DEMO_CHARS_PER_TOKEN`): the demo bills it, the gateway meters it. */
export const demoTokens = (chars: number): number => Math.ceil(chars / DEMO_CHARS_PER_TOKEN)

/** Output tokens `text` may cost on a provider of `kind`, never fewer than it bills. */
export function outputTokenCount(text: string, kind: ProviderKind): number {
  if (text === '') return 0
  if (kind === 'demo') return demoTokens(text.length)
  if (kind !== 'openai') return shapeBound(textShape(text), familyOf(kind))
  if (text.length > SHORT_TEXT) return countO200k(text).tokens
  let n = shortCounts.get(text)
  if (n === undefined) {
    n = countO200k(text).tokens
    setBounded(shortCounts, text, n, SHORT_TEXTS)
  }
  return n
}
