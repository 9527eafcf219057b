/**
 * @module
 * An upper bound on the tokens a provider bills for a text (DESIGN §11 "Tight, not conservative"),
 * by tokenizer family:
 * - `o200k`: OpenAI's GPT-4o / 4.1 / 5 / o-series encoding, counted exactly (o200k.ts).
 * - `cl100k`: OpenAI's GPT-4, GPT-4 Turbo, GPT-3.5 and embedding models (`cl100k_base`): a
 *   calibrated bound, as below. cl100k is within 2 % of o200k on English, code and JSON and splits
 *   other scripts finer (Devanagari 3.5×, Cyrillic and Hangul 1.6×, CJK 1.3×), which the weights
 *   cover; an exact count would take a second table (+2.1 MB) and a second encoding pass a text.
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
import type { ProviderKind } from '../config/schema-providers.ts'
import { countPiece, pieceEndsAt, utf8Length } from './o200k.ts'

/** A tokenizer family the bound is calibrated for. */
export type Family = 'o200k' | 'cl100k' | 'claude' | 'gemini' | 'any'

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
  /** UTF-8 bytes bounded by their count, not encoded: long runs, and stretches after a dense piece. */
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

/** The families OpenAI bills by their own encoding: its chat framing, no template on embeddings. */
export const isOpenAIEncoding = (family: Family): boolean => family === 'o200k' || family === 'cl100k'

/**
 * Calibrated on the corpus (2026-11-29): with each factor fixed (prose lands 10–20 % above the
 * family's count), the weights are the least a linear program needed to put every corpus text at
 * least 3 % above it (weighing prose, code and tool schemas 20× in the sum it minimised), then
 * rounded up: they cover the classes where a tokenizer splits finer than o200k (Claude: Cyrillic,
 * Hangul, Devanagari; Gemini and Llama 2: digits one by one, line breaks; Llama 2: emoji).
 * cl100k (2026-12-01, against gpt-tokenizer's `cl100k_base`): factor 1.08, above the largest
 * cl100k ÷ o200k of the corpus' ASCII texts (JSON, 1.024) and of the repository's 971 source,
 * doc and fixture files (1.043, SQL); the weights the same way; byte-level BPE adds no token a text.
 */
const PROFILES: Record<Exclude<Family, 'o200k'>, Profile> = {
  cl100k: { factor: 1.08, weights: [0, 0, 0, 0, 0, 0.22, 0.9, 0.45, 0.23, 0.05, 1.4], perText: 0 },
  claude: { factor: 1.2, weights: [0, 0.1, 0, 0, 0, 0.25, 1, 0.55, 0.12, 0.05, 0.4], perText: 1 },
  gemini: { factor: 1.2, weights: [0, 0.4, 0.02, 0.25, 0, 0.05, 0.05, 0.05, 0.05, 0.05, 0.1], perText: 1 },
  any: { factor: 1.3, weights: [0, 0.35, 0.02, 0.25, 0, 0.25, 1, 0.55, 0.12, 0.05, 1], perText: 1 },
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

/** Characters encoded at a time: a piece ends where o200k always splits, so pieces sum exactly. */
export const PIECE = 4_096
/** Yields to the event loop (async callers) after about this many characters. */
export const YIELD_CHARS = 16_384
/**
 * o200k tokens per UTF-8 byte above which a piece is dense (random letters, base64, hex, random
 * CJK, emoji: 0.5–0.8; prose, code, JSON, CJK prose 0.1–0.36). Byte-pair encoding costs per token,
 * so the `SKIP` pieces after a dense one are bounded by their bytes instead of encoded (then the
 * next is encoded again): no text encodes more tokens per byte than `DENSE`, about what JSON does.
 */
export const DENSE = 0.4
export const SKIP = 7

/**
 * The shape of `text` in one pass: long runs and dense stretches bounded by their bytes, the rest
 * encoded piece by piece. A generator so the async caller can yield between pieces.
 */
function* shapeSteps(text: string, encode: Encode): Generator<void, TextShape> {
  const classes = new Array<number>(CLASSES).fill(0)
  let tokens = 0
  let runBytes = 0
  let bytes = 0
  let skip = 0
  let sinceYield = 0
  /** `text[a, b)`, ended where a piece ends: encoded, or bounded by its bytes after a dense piece. */
  const normal = (a: number, b: number) => {
    if (b <= a) return
    const n = utf8Length(text, a, b)
    bytes += n
    if (skip > 0) {
      skip--
      runBytes += n
      return
    }
    // No run in it is longer than `RUN` without a place to split: encoded whole, linear.
    const t = encode(text.slice(a, b))
    if (t > DENSE * n) skip = SKIP
    tokens += t
    for (let k = a; k < b; k++) {
      const c = classOf(text.charCodeAt(k))
      if (c >= 0) classes[c]!++
    }
  }
  let from = 0
  while (from < text.length) {
    let split = from
    let i = from + 1
    for (; i < text.length; i++) {
      if (pieceEndsAt(text, i)) split = i
      else if (i - split >= RUN) break
      if (i - from >= PIECE && split > from) break
    }
    if (i >= text.length) {
      normal(from, text.length)
      break
    }
    if (i - split >= RUN) {
      // A long run from `split`: bounded by its bytes up to the next place a piece ends.
      normal(from, split)
      let end = i + 1
      while (end < text.length && !pieceEndsAt(text, end)) end++
      const n = utf8Length(text, split, end)
      runBytes += n
      bytes += n
      sinceYield += end - from
      from = end
    } else {
      normal(from, split)
      sinceYield += split - from
      from = split
    }
    if (sinceYield >= YIELD_CHARS) {
      sinceYield = 0
      yield
    }
  }
  return { tokens, classes, runBytes, bytes }
}

/** Counts the o200k tokens of a piece of text (o200k.ts `countPiece`; tests pass a spy). */
export type Encode = (piece: string) => number

/** The shape of a text, at once. */
export function textShape(text: string, encode: Encode = countPiece): TextShape {
  const steps = shapeSteps(text, encode)
  for (;;) {
    const s = steps.next()
    if (s.done) return s.value
  }
}

/** The shape of a text, yielding to the event loop every `YIELD_CHARS` characters. */
export async function textShapeAsync(text: string, encode: Encode = countPiece): Promise<TextShape> {
  const steps = shapeSteps(text, encode)
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

/**
 * OpenAI's models on o200k (GPT-4o, 4.1, 4.5, 5, the o-series, their codex and oss models): a
 * provider of kind `openai` serving a model of such a name is OpenAI, counted exactly. Those on
 * cl100k (GPT-4 and its dated, 32k and turbo versions, GPT-3.5 Turbo — `gpt-35-turbo` as Azure
 * names it — and the embedding models `text-embedding-3-*` and `-ada-002`) get the `cl100k`
 * bound. Any other model on an `openai` provider (an OpenAI-compatible server's) gets the `any`
 * bound, as does the demo provider.
 */
const O200K_MODELS = /^(gpt-4o|gpt-4\.[15]|gpt-5|o[1-9]|chatgpt-4o|codex|gpt-oss|computer-use)/i
const CL100K_MODELS = /^(gpt-4(-|$)|gpt-3\.5-turbo|gpt-35-turbo|text-embedding-(3-|ada-002))/i

/** The tokenizer family of a provider kind and model (its upstream name; unknown: omitted). */
export function familyOf(kind: ProviderKind, model?: string): Family {
  if (kind === 'anthropic') return 'claude'
  if (kind === 'gemini') return 'gemini'
  if (kind !== 'openai' || model === undefined) return 'any'
  if (O200K_MODELS.test(model)) return 'o200k'
  return CL100K_MODELS.test(model) ? 'cl100k' : 'any'
}

/** Texts shorter than this are not kept (their shape costs less than the lookup). */
const CACHED_FROM = 8
/** Shapes kept, least recently used dropped first: about 200 bytes each. */
export const CACHE_ENTRIES = 8_192

/**
 * Shapes of texts seen lately, by a 64-bit hash of the text (and its length checked): agents
 * resend the whole conversation every turn, so a message is encoded once. A hash collision of
 * texts of one length would reuse another text's shape; at 8,192 entries the chance is about
 * one in 2^51 a lookup.
 */
const shapes = new Map<bigint | number, TextShape & { chars: number }>()

/** The cache's key of `text`; null for a text too short to keep. */
const keyOf = (text: string): bigint | number | null => (text.length < CACHED_FROM ? null : Bun.hash(text))

/** The shape kept under `key` for a text of `chars` (now the most recently used), if any. */
function cached(key: bigint | number | null, chars: number): TextShape | undefined {
  if (key === null) return undefined
  const hit = shapes.get(key)
  if (hit === undefined || hit.chars !== chars) return undefined
  shapes.delete(key)
  shapes.set(key, hit)
  return hit
}

function keep(key: bigint | number | null, shape: TextShape, chars: number): TextShape {
  if (key === null) return shape
  shapes.set(key, { ...shape, chars })
  if (shapes.size > CACHE_ENTRIES) shapes.delete(shapes.keys().next().value!)
  return shape
}

/** The shape of `text`, kept for the next time it is seen. */
export function shapeOf(text: string): TextShape {
  const key = keyOf(text)
  return cached(key, text.length) ?? keep(key, textShape(text), text.length)
}

/** `shapeOf`, yielding while a long text is encoded. */
export async function shapeOfAsync(text: string): Promise<TextShape> {
  const key = keyOf(text)
  const hit = cached(key, text.length)
  if (hit) return hit
  return keep(key, text.length > YIELD_CHARS ? await textShapeAsync(text) : textShape(text), text.length)
}

/**
 * An upper bound on the tokens `kind`'s provider bills for `text` (of `model`, its upstream name,
 * where known: an `openai` provider's GPT-4o-family model is counted exactly). Synchronous.
 *
 * @example
 * textTokenBound('Hello, world', 'anthropic') // → 6 (Claude bills 4)
 */
export function textTokenBound(text: string, kind: ProviderKind, model?: string): number {
  const family = familyOf(kind, model)
  const key = keyOf(text)
  const hit = cached(key, text.length)
  if (hit) return shapeBound(hit, family)
  return shapeBound(keep(key, textShape(text), text.length), family)
}
