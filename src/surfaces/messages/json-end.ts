/**
 * @module
 * Whether a tool call's arguments, fed as they stream, are one whole JSON object so far: its
 * closing brace reached outside any string, nothing but whitespace after. No more text can follow
 * that and leave them valid JSON, so the Messages encoder may close the call's block there and
 * stream the text that comes after it (stream-encoder.ts). A scan of each delta once (its
 * strings, escapes and the closers its open objects and arrays expect), not a parse of all the
 * arguments at each delta.
 *
 * @example
 * const end = new JsonEnd()
 * end.feed('{"x":')  // end.whole === false
 * end.feed('1}')     // end.whole === true
 */

const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

const isJsonSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

export class JsonEnd {
  /** The closers the open objects and arrays expect, innermost last. */
  private readonly closers: number[] = []
  private inString = false
  private escaped = false
  /** The first character was `{`. */
  private object = false
  /** The object closed. */
  private closed = false
  /** Not an object, or something other than whitespace followed its end: never whole. */
  private broken = false

  get whole(): boolean {
    return this.closed && !this.broken
  }

  feed(text: string): void {
    for (let i = 0; i < text.length && !this.broken; i++) {
      const c = text.charCodeAt(i)
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (c === BACKSLASH) this.escaped = true
        else if (c === QUOTE) this.inString = false
        continue
      }
      if (isJsonSpace(c)) continue
      if (this.closed || (!this.object && c !== OPEN_BRACE)) {
        this.broken = true
        break
      }
      this.object = true
      if (c === QUOTE) this.inString = true
      else if (c === OPEN_BRACE) this.closers.push(CLOSE_BRACE)
      else if (c === OPEN_BRACKET) this.closers.push(CLOSE_BRACKET)
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        // A closer that is not the one expected (`{"a":1]`) makes the arguments invalid JSON.
        if (this.closers.pop() !== c) {
          this.broken = true
          break
        }
        if (this.closers.length === 0) this.closed = true
      }
    }
  }
}
