/**
 * @module
 * A JSON text kept as the pieces it was edited from — views of the client's text (`slice`, which
 * shares its characters) and the few fields the gateway changed — rather than joined. DESIGN §16: a
 * body costs about its own size while in flight. A pass-through request holds the client's text for
 * its whole life (its parsed value's long strings are views of it: `shared-strings.ts`); its
 * upstream body, that text with the model swapped, was one concatenation, which JavaScriptCore
 * flattens into a copy as large as the body when it is read (when it is sent): every forwarded 10
 * MB body was held twice until the upstream answered, and its copy until the next collection.
 * Spliced, the pieces are written to the upstream one after another (`providers/request-body.ts`),
 * a slice at a time: nothing as large as the body is made.
 *
 * @example
 * const body = new SplicedText(['{"model":"gpt-5",', text.slice(20)])
 * String(body) // the joined text (a copy: only where a whole string is needed)
 */

/** Texts of this many characters or more are kept spliced; a smaller one is joined (its copy costs nothing). */
export const SPLICE_MIN = 1024 * 1024

export class SplicedText {
  constructor(readonly parts: readonly string[]) {}

  /** The whole text, joined: a copy of it. */
  toString(): string {
    return this.parts.join('')
  }

  /** Its size in UTF-8 bytes (what a `content-length` says), counted without encoding it. */
  byteLength(): number {
    let n = 0
    for (const p of this.parts) n += Buffer.byteLength(p, 'utf8')
    return n
  }
}

/** A JSON text: one string, or its pieces. */
export type JsonText = string | SplicedText

/** The text as one string (joined, a copy, when it was spliced). */
export function flatText(text: JsonText): string {
  return typeof text === 'string' ? text : text.toString()
}
