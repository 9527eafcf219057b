/**
 * @module
 * Counting a client's text with o200k (GPT-4o's encoding, limits/o200k-bpe.ts), the one way the
 * gateway does it (the plan's context cap, count_tokens):
 * - Text that spells a special token (`<|endoftext|>`) counts as the text it is, as OpenAI bills a
 *   prompt.
 * - The encoder sees at most `SLICE` characters at a time. Byte-pair encoding is superlinear in
 *   the length of one pre-tokenizer piece, and a run without spaces (Chinese, base64, one letter
 *   repeated) is one piece: 64 K characters of it took 2–12 s whole, 65–140 ms in slices
 *   (measured 2026-11-25). A slice ends at the last place in it where o200k's own pre-tokenizer
 *   always splits, so prose, code and JSON count exactly. A run with no such place is cut at
 *   `SLICE`, and the slices on both sides of such a cut count their UTF-8 bytes, not their
 *   tokens: the halves of a piece encoded apart can count fewer tokens than the piece whole (1 a
 *   cut on random letters), and the count must never be under what the provider bills (DESIGN
 *   §11). Never under, because every piece a cut crosses lies in slices counted by bytes (no
 *   token is less than a byte), and every other slice starts and ends where the pre-tokenizer
 *   always splits (counted exactly). The price is on such runs only: 2 × the whole count on
 *   random letters or CJK, 8 × on one letter repeated.
 * - Nothing is cached per piece: memory stays the table's whatever pieces clients choose.
 */
import { bpeCount } from './o200k-bpe.ts'
import { isSpace } from './space.ts'

export const SLICE = 256

/** Where the slice of `text` starting at `from` ends (exclusive). */
export function sliceEnd(text: string, from: number): number {
  const end = from + SLICE
  if (end >= text.length) return text.length
  for (let i = end; i > from; i--) if (pieceEndsAt(text, i)) return i
  // Not between the halves of a surrogate pair.
  const c = text.charCodeAt(end)
  return c >= 0xdc00 && c <= 0xdfff ? end - 1 : end
}

/**
 * Whether o200k's pre-tokenizer ends a piece before `text[i]` whatever follows: before a space
 * followed by anything but whitespace (a word's or a symbol's leading space; a run of whitespace
 * stops short of it), and after a letter followed by neither a letter, a mark nor `'` (a word is
 * letters and marks, then an optional `'s`, `'t`, ...; minified JSON is full of these).
 */
export function pieceEndsAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i)
  if (c === 32) return (flags(text.charCodeAt(i + 1)) & SPACE) === 0
  return c !== 39 && (flags(c) & WORD) === 0 && (flags(text.charCodeAt(i - 1)) & WORD) !== 0
}

const WORD = 1
const SPACE = 2
/** Per UTF-16 code unit: 4 once known, | WORD for `\p{L}\p{M}`, | SPACE for `\s` (filled on first sight). */
const FLAGS = new Uint8Array(65_536)
const WORD_RE = /[\p{L}\p{M}]/u

/** `WORD` and `SPACE` of a code unit (none for a half of a surrogate pair, or past the text's end). */
function flags(c: number): number {
  if (Number.isNaN(c)) return 0 // before the start or past the end
  let f = FLAGS[c]!
  if (f === 0) {
    const ch = String.fromCharCode(c)
    f = 4 | (WORD_RE.test(ch) ? WORD : 0) | (isSpace(c) ? SPACE : 0)
    FLAGS[c] = f
  }
  return f
}

/** o200k tokens of `text` whole (no slicing: a caller that splits runs itself). */
export const countPiece: (text: string) => number = bpeCount

/** What a counter counted: `tokens` in the first `chars` characters of the text. */
export interface Counted {
  tokens: number
  chars: number
}

/** Counts a text's o200k tokens slice by slice, stopping after the slice that passes `stopAbove`. */
export type O200kCounter = (text: string, stopAbove?: number) => Counted

/** The counter (synchronous: o200k-bpe.ts reads its table at start, or else at the first count). */
export const countO200k: O200kCounter = (text, stopAbove = Number.POSITIVE_INFINITY) => {
  let tokens = 0
  let from = 0
  // Whether `from` is a cut where no piece ends.
  let cut = false
  while (from < text.length && tokens <= stopAbove) {
    const end = sliceEnd(text, from)
    const cutAtEnd = end < text.length && !pieceEndsAt(text, end)
    tokens += cut || cutAtEnd ? utf8Length(text, from, end) : bpeCount(text.slice(from, end))
    cut = cutAtEnd
    from = end
  }
  return { tokens, chars: from }
}

/** UTF-8 bytes of `text[from, to)`, without copying it (a lone surrogate is U+FFFD's 3). */
export function utf8Length(text: string, from: number, to: number): number {
  let n = 0
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < to && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4
      i++
    } else n += 3
  }
  return n
}
