/**
 * @module
 * A whole answer's text in the small pieces a stream would have carried it in: for an upstream
 * that answered one whole body where events were asked for (it ignored `stream`). Read as the
 * stream it stands for, its text is counted piece by piece like any stream's, so the cut at the
 * output allowance (DESIGN §11) falls inside it — the client gets the text up to the allowance —
 * rather than refusing the whole text at once.
 *
 * A piece ends before the whitespace that would take it past `PIECE_CHARS` characters, so a
 * space starts the next piece, joined to its word as a byte-pair tokenizer joins it: the pieces
 * count as the text does. A run without whitespace is split at `PIECE_CHARS`, never inside a
 * surrogate pair.
 *
 * @example
 * textPieces('the quick brown fox jumps') // ['the quick brown', ' fox jumps']
 */

import { isSpace } from '../../limits/space.ts'

/** About four tokens of prose a piece: an upstream's own stream sends one to a few a chunk. */
export const PIECE_CHARS = 16

export function textPieces(text: string, max = PIECE_CHARS): string[] {
  if (text.length <= max) return text === '' ? [] : [text]
  const out: string[] = []
  let start = 0
  /** Where the last whitespace run after `start` begins: the piece may end before it. */
  let space = -1
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (isSpace(c) && !isSpace(text.charCodeAt(i - 1))) space = i
    if (i - start < max) continue
    let end = space > start ? space : i
    // A low surrogate stays with its high one.
    if (end === i && isLow(text.charCodeAt(end)) && end - 1 > start) end--
    out.push(text.slice(start, end))
    start = end
    space = -1
  }
  if (start < text.length) out.push(text.slice(start))
  return out
}

const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff
