/**
 * @module
 * A whole answer's text in the small pieces a stream would have carried it in: for an upstream
 * that answered one whole body where events were asked for (it ignored `stream`). Read as the
 * stream it stands for, its text is counted piece by piece like any stream's, so the cut at the
 * output allowance (DESIGN §11) falls inside it — the client gets the text up to the allowance —
 * rather than refusing the whole text at once.
 *
 * Only as far as a cut may fall: `TextPieces` is given the most output tokens the answer may be
 * cut within (`CallContext.cutWithin`, the allowance's most) and makes one more piece than that
 * across all the answer's texts — every piece counts at least one token, so the cut falls inside
 * them — then each text's rest in one piece. Without a limit there is no cut to make: each text
 * is one piece. So a whole answer's events cost about its own size (DESIGN §16), not a chunk's
 * head per four tokens of it (a 30 MB text was 632 MB of events).
 *
 * A piece ends before the whitespace that would take it past `PIECE_CHARS` characters, so a
 * space starts the next piece, joined to its word as a byte-pair tokenizer joins it: the pieces
 * count as the text does. A run without whitespace is split at `PIECE_CHARS`, never inside a
 * surrogate pair.
 *
 * @example
 * const pieces = new TextPieces(ctx.cutWithin)
 * for (const piece of pieces.of('the quick brown fox jumps')) … // 'the quick brown', ' fox jumps'
 */

import { isSpace } from '../../limits/space.ts'

/** About four tokens of prose a piece: an upstream's own stream sends one to a few a chunk. */
export const PIECE_CHARS = 16

export class TextPieces {
  /** Pieces still to make before each text's rest goes in one. */
  private left: number

  /** `cutWithin`: output tokens a cut may fall within; absent, no cut to make. */
  constructor(cutWithin?: number) {
    this.left = cutWithin === undefined ? 0 : cutWithin + 1
  }

  /** `text` in pieces while any are left, its rest in one; none for an empty text. */
  *of(text: string): Generator<string> {
    let start = 0
    /** Where the last whitespace run after `start` begins: the piece may end before it. */
    let space = -1
    for (let i = 1; this.left > 0 && i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (isSpace(c) && !isSpace(text.charCodeAt(i - 1))) space = i
      if (i - start < PIECE_CHARS) continue
      let end = space > start ? space : i
      // A low surrogate stays with its high one.
      if (end === i && isLow(text.charCodeAt(end)) && end - 1 > start) end--
      this.left--
      yield text.slice(start, end)
      start = end
      space = -1
    }
    if (start < text.length) {
      if (this.left > 0) this.left--
      yield start === 0 ? text : text.slice(start)
    }
  }
}

const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff
