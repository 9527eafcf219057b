/**
 * @module
 * Generated text counted as it arrives (DESIGN §11): an upper bound of the output tokens a
 * provider bills for it, in the answering model's tokenizer family, cheap enough to run on every
 * chunk of a stream under a token or money limit (and never on a stream without one).
 *
 * The family is the input bound's (limits/text-bound.ts `familyOf`, by provider kind and upstream
 * model), worked out once an attempt (`outputFamily`): OpenAI's GPT-4o-family models the o200k
 * count exactly (limits/o200k.ts); GPT-4, GPT-4 Turbo and GPT-3.5 Turbo the `cl100k` bound (o200k
 * × 1.08 and per-script weights: cl100k bills Devanagari 3.5× o200k), Anthropic `claude`, Gemini
 * `gemini`, any other model of an OpenAI-compatible server `any` — each `shapeBound`, never under
 * the family's count on the measured corpus, so an answer is neither cut late nor at a quarter of
 * its cap as one token a byte would cut it. The demo: its own count exactly
 * (`DEMO_CHARS_PER_TOKEN`), as the demo model counts what it answers (providers/demo/text.ts) — a
 * first-party tokenizer, known as o200k is.
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
import { type Family, familyOf, shapeBound, textShape } from './text-bound.ts'

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

/** How an answer's text is counted: its tokenizer family's bound, or the demo's own count. */
export type OutputFamily = Family | 'demo'

/**
 * The output family of a provider `kind` answering as `model` (its upstream name): the input
 * bound's, but for a model of an OpenAI-compatible server the input bound does not know (`any`),
 * counted in o200k as before — `any`'s factor (1.3) and its token a text, on every chunk of a
 * stream, would cut such a stream of short chunks at half its cap (docs/tokens-and-money.md).
 */
export function outputFamily(kind: ProviderKind, model: string): OutputFamily {
  if (kind === 'demo') return 'demo'
  const family = familyOf(kind, model)
  return family === 'any' ? 'o200k' : family
}

/** Output tokens `text` may cost in `family` (`outputFamily`), never fewer than its provider bills. */
export function outputTokenCount(text: string, family: OutputFamily): number {
  if (text === '') return 0
  if (family === 'demo') return demoTokens(text.length)
  if (family !== 'o200k') return shapeBound(textShape(text), family)
  if (text.length > SHORT_TEXT) return countO200k(text).tokens
  let n = shortCounts.get(text)
  if (n === undefined) {
    n = countO200k(text).tokens
    setBounded(shortCounts, text, n, SHORT_TEXTS)
  }
  return n
}
