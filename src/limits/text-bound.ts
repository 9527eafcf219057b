/**
 * @module
 * An upper bound on the tokens a provider bills for a text (DESIGN §11 "Tight, not conservative"),
 * by tokenizer family:
 * - `o200k`: OpenAI's GPT-4o / 4.1 / 5 / o-series encoding, counted exactly (o200k.ts).
 * - `claude`, `gemini`, `any` (every tokenizer measured: OpenAI's two, Claude's, Gemini's, Llama 2's
 *   and 3's — for OpenAI-compatible servers of unknown models and the demo provider):
 *   `factor` × the o200k count + a weight per character of each class (digits, whitespace, each
 *   script), calibrated on the corpus of `test/support/token-corpus.ts` so that the bound is never
 *   under the family's count on any corpus text, and in the median within 1.25× on prose, code and
 *   tool schemas (`bun scripts/bench/estimate-tokens.ts` prints the ratios; BENCHMARKS.md has them).
 *
 * Cost: byte-pair encoding is cheap on words and dear on long runs without a place the
 * pre-tokenizer splits (random letters, base64, CJK without punctuation: 1.3–1.5 s per MB, against
 * 0.2 s for prose). Such a run of `RUN` characters or more is not encoded: it is bounded by its
 * UTF-8 bytes (every tokenizer here is byte-level BPE or SentencePiece with byte fallback, so a
 * token covers at least one byte of text). So a hostile text costs what prose of its size does.
 */
import { loadedO200k, type O200kCounter, pieceEndsAt } from './o200k.ts'

/** A tokenizer family the bound is calibrated for. */
export type Family = 'o200k' | 'claude' | 'gemini' | 'any'

/** Characters without a place to split from which a run is bounded by its bytes, not encoded. */
export const RUN = 48

/**
 * Character classes (UTF-16 code units; an astral character counts once, by its high surrogate):
 * 0 ASCII letter, 1 ASCII digit, 2 space or tab, 3 line break, 4 other ASCII, 5 Latin-1 to Arabic
 * (U+0080–U+08FF: accented Latin, Greek, Cyrillic, Hebrew, Arabic), 6 Indic and Southeast Asian
 * (U+0900–U+109F), 7 Hangul, 8 CJK, kana and full-width forms, 9 other BMP, 10 astral (emoji,
 * CJK extensions).
 */
export const CLASSES = 11

/** What a text is made of: what the bound of every family is worked out from. */
export interface TextShape {
  /** o200k tokens of the text outside long runs. */
  tokens: number
  /** Characters of each class outside long runs (`CLASSES` entries). */
  classes: number[]
  /** UTF-8 bytes of the long runs (each bounded by its bytes). */
  runBytes: number
  /** UTF-8 bytes of the whole text. */
  bytes: number
}

interface Profile {
  factor: number
  /** Tokens per character of each class, added to `factor` × the o200k count. */
  weights: number[]
  /** Tokens a text may add whatever it holds (SentencePiece's leading space). */
  perText: number
}

/**
 * Calibrated on the corpus (2026-11-29; the fit is `bun scripts/bench/estimate-tokens.ts --fit`):
 * each factor leaves prose about 10–15 % above the family's count, the weights cover the classes
 * where another tokenizer splits finer than o200k (Claude: Cyrillic, Hangul, Devanagari; Gemini and
 * Llama 2: digits one by one, whitespace runs).
 */
const PROFILES: Record<Exclude<Family, 'o200k'>, Profile> = {
  claude: {
    factor: 1.2,
    weights: [0, 0.1, 0, 0, 0, 0.6, 1.1, 0.85, 0.3, 0.25, 0.5],
    perText: 1,
  },
  gemini: {
    factor: 1.2,
    weights: [0, 0.6, 0.07, 0.1, 0, 0.1, 0.15, 0.15, 0.1, 0.25, 0.5],
    perText: 1,
  },
  any: {
    factor: 1.3,
    weights: [0, 0.6, 0.07, 1, 0, 0.6, 1.1, 0.85, 0.3, 0.3, 0.5],
    perText: 1,
  },
}

export function classOf(c: number): number {
  if (c < 128) {
    if ((c | 32) >= 97 && (c | 32) <= 122) return 0
    if (c >= 48 && c <= 57) return 1
    if (c === 32 || c === 9) return 2
    if (c === 10 || c === 13) return 3
    return 4
  }
  if (c < 0x900) return 5
  if (c < 0x10a0) return 6
  if ((c >= 0x1100 && c < 0x1200) || (c >= 0x3130 && c < 0x3190) || (c >= 0xac00 && c < 0xd7b0)) return 7
  if ((c >= 0x2e80 && c < 0xa000) || (c >= 0xf900 && c < 0xfb00) || (c >= 0xff00 && c < 0xfff0)) return 8
  if (c >= 0xd800 && c < 0xdc00) return 10
  if (c >= 0xdc00 && c < 0xe000) return -1
  return 9
}

/** UTF-8 bytes of `text[from, to)`, without copying it. */
function utf8(text: string, from: number, to: number): number {
  let n = 0
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i)
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xdc00 ? 4 : c >= 0xdc00 && c < 0xe000 ? 0 : 3
  }
  return n
}

/** Yields to the event loop between pieces of work of about `YIELD_CHARS` characters. */
export const YIELD_CHARS = 16_384

/**
 * The shape of `text`: one pass finds the long runs and counts classes; the rest is encoded in
 * pieces of at most `YIELD_CHARS` characters ended where o200k always splits, so the sum is the
 * text's o200k count. `pause` (async callers) is awaited between pieces.
 */
function* shapeSteps(text: string, count: O200kCounter): Generator<void, TextShape> {
  const classes = new Array<number>(CLASSES).fill(0)
  let tokens = 0
  let runBytes = 0
  let bytes = 0
  let segment = 0 // start of the text not yet encoded
  let split = 0 // the last place a piece ends
  const encode = (to: number) => {
    if (to > segment) tokens += count(text.slice(segment, to)).tokens
  }
  for (let i = 0; i < text.length; i++) {
    if (i > 0 && pieceEndsAt(text, i)) split = i
    if (i - split >= RUN) {
      // A long run from `split`: bounded by its bytes up to the next place a piece ends.
      let end = i + 1
      while (end < text.length && !pieceEndsAt(text, end)) end++
      for (let k = segment; k < split; k++) {
        const c = classOf(text.charCodeAt(k))
        if (c >= 0) classes[c]!++
      }
      encode(split)
      const b = utf8(text, split, end)
      runBytes += b
      bytes += b
      segment = end
      split = end
      i = end - 1
      continue
    }
    if (i - segment >= YIELD_CHARS && split > segment) {
      for (let k = segment; k < split; k++) {
        const c = classOf(text.charCodeAt(k))
        if (c >= 0) classes[c]!++
      }
      bytes += utf8(text, segment, split)
      encode(split)
      segment = split
      yield
    }
  }
  for (let k = segment; k < text.length; k++) {
    const c = classOf(text.charCodeAt(k))
    if (c >= 0) classes[c]!++
  }
  bytes += utf8(text, segment, text.length)
  encode(text.length)
  return { tokens, classes, runBytes, bytes }
}

/** The shape of a text, at once. */
export function textShape(text: string, count: O200kCounter): TextShape {
  const steps = shapeSteps(text, count)
  for (;;) {
    const s = steps.next()
    if (s.done) return s.value
  }
}

/** The shape of a text, yielding to the event loop every `YIELD_CHARS` characters. */
export async function textShapeAsync(text: string, count: O200kCounter): Promise<TextShape> {
  const steps = shapeSteps(text, count)
  for (;;) {
    const s = steps.next()
    if (s.done) return s.value
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}

/** The bound of a text of `shape` for `family`. */
export function shapeBound(shape: TextShape, family: Family): number {
  if (family === 'o200k') return shape.tokens + shape.runBytes
  const p = PROFILES[family]
  let b = p.factor * shape.tokens
  for (let c = 0; c < CLASSES; c++) b += p.weights[c]! * shape.classes[c]!
  // No family bills more tokens than the text has bytes (plus its leading space).
  return Math.min(Math.ceil(b) + shape.runBytes, shape.bytes) + p.perText
}
