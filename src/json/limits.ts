/**
 * @module
 * Structural limits on a JSON text, checked in one linear pass before `JSON.parse` sees it, so a
 * hostile body costs no more than a valid one of the same size. Without them, 10 MB of `[` made
 * `JSON.parse` and then the syntax-error finder build ten million frames (seconds of a blocked
 * event loop and most of a gigabyte), and 10 MB of `{},` would allocate three million objects.
 *
 * Depth: `JSON.stringify` (used to send the request upstream) and recursive schema converters
 * overflow the stack somewhere past a few thousand levels. Real requests stay far below 100: a
 * tool's JSON Schema ten objects deep is about 25 levels. Elements: a long agent conversation
 * (hundreds of messages with tool calls and schemas) has a few tens of thousands.
 *
 * The scan works on pieces of text as they arrive (`JsonStructureScanner`), so the body reader
 * stops reading a hostile body at the first limit it breaks instead of buffering all of it.
 *
 * @example
 * checkJsonStructure('[[1]]', { maxDepth: 1, maxElements: 10 }) // { kind: 'depth', offset: 1, path: ['0'] }
 */

export const MAX_JSON_DEPTH = 100
/** Opening brackets and commas outside strings: array items and object members, roughly. */
export const MAX_JSON_ELEMENTS = 100_000

export interface JsonLimits {
  /** Containers nested deeper than this are refused (the top-level value is level 1). */
  maxDepth: number
  /** Array items and object members (every opening bracket and comma), but see `maxArrayScalars`. */
  maxElements: number
  /**
   * Where set, numbers, booleans and nulls in arrays count against this instead of `maxElements`
   * (the comma after each): embeddings' token ids, 300,000 a request, while object members,
   * strings and containers stay held to `maxElements`. Such an item is one cheap slot of a packed
   * array, where an object member is a key to intern and a slot in a dictionary: a 300,000-member
   * object cost 7–10 × a valid body of its size.
   */
  maxArrayScalars?: number
}

export const DEFAULT_JSON_LIMITS: Readonly<JsonLimits> = Object.freeze({
  maxDepth: MAX_JSON_DEPTH,
  maxElements: MAX_JSON_ELEMENTS,
})

/** What the scanner reports: which limit broke, and where. */
export interface LimitBreak {
  kind: 'depth' | 'elements' | 'scalars'
  /** Index (UTF-16 code units, from the start of the text) of the character that broke the limit. */
  offset: number
}

export type StructureProblem =
  /** `path`: the keys and indexes leading to the container that opens one level too deep. */
  | { kind: 'depth'; offset: number; path: string[] }
  | { kind: 'elements'; offset: number }
  | { kind: 'scalars'; offset: number }

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const COMMA = 0x2c
/** 1 for the bytes the scanner stops at: quote, brackets, braces, comma. */
const STRUCTURAL = new Uint8Array(256)
for (const c of [QUOTE, OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT, COMMA]) STRUCTURAL[c] = 1
const UTF8 = new TextDecoder()
const UTF8_OUT = new TextEncoder()
/** Characters `checkJsonStructure` encodes at a time. */
const ENCODED_PART = 64 * 1024
/** Longer keys are cut in the path of a depth error. */
const KEY_SHOWN = 64

/**
 * The first structural limit `text` breaks, or `null`. Not a validator: invalid JSON within the
 * limits passes (and `JSON.parse` refuses it). Whatever the input: O(length) time, O(maxDepth) memory.
 */
export function checkJsonStructure(
  text: string,
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
): StructureProblem | null {
  const scanner = new JsonStructureScanner(limits)
  // Encoded a part at a time into one buffer, so a text that breaks a limit early (10 MB of `[`)
  // is not encoded whole; a part never ends between a surrogate pair's halves.
  let bytes = new Uint8Array(Math.min(3 * text.length, 3 * ENCODED_PART))
  let size = 0
  let found: LimitBreak | null = null
  let chars = 0
  let partStart = 0
  while (chars < text.length && !found) {
    let end = Math.min(text.length, chars + ENCODED_PART)
    if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--
    if (bytes.byteLength - size < 3 * (end - chars)) {
      const grown = new Uint8Array(Math.max(2 * bytes.byteLength, size + 3 * (end - chars)))
      grown.set(bytes.subarray(0, size))
      bytes = grown
    }
    partStart = size
    size += UTF8_OUT.encodeInto(text.slice(chars, end), bytes.subarray(size)).written
    found = scanner.feed(bytes.subarray(partStart, size))
    if (!found) chars = end
  }
  if (!found) return null
  // The scan counts bytes; the problem is told in characters (UTF-16 code units) of the text.
  const offset = chars + UTF8.decode(bytes.subarray(partStart, found.offset)).length
  return found.kind === 'depth'
    ? { kind: 'depth', offset, path: scanner.path(bytes.subarray(0, size)) }
    : found.kind === 'elements'
      ? { kind: 'elements', offset }
      : { kind: 'scalars', offset }
}

/**
 * `checkJsonStructure` over a text's UTF-8 bytes as they arrive in pieces: `feed` each piece in
 * order until one returns a problem. It tracks brackets and strings only.
 *
 * A byte between strings is one table look-up; a string is skipped by `indexOf`. The counting
 * runs once per bracket, comma or string; valid JSON has at most four of those per
 * element (an opener or comma, its closer, a key and a string value), so more is refused as too
 * many elements: `]]]]…` or `""""…` cannot make it run ten million times.
 */
export class JsonStructureScanner {
  private readonly maxTokens: number
  // Per open container: object or array, and where in it the scan is (the index, or the current
  // key's quotes as offsets into the whole text).
  private readonly isObject: boolean[] = []
  private readonly index: number[] = []
  private readonly keyStart: number[] = []
  private readonly keyEnd: number[] = []
  private depth = 0
  private elements = 0
  private scalars = 0
  private tokens = 0
  /** The current item holds a string or a container: it is no scalar (`maxArrayScalars`). */
  private structured = false
  private expectKey = false
  /** Offset of the current piece in the whole text. */
  private base = 0
  /** Inside a string that started in an earlier piece; `inKey`: that string is a key. */
  private inString = false
  private inKey = false
  /** The last piece ended in an odd run of backslashes inside a string: the next character is escaped. */
  private escaped = false

  constructor(private readonly limits: JsonLimits = DEFAULT_JSON_LIMITS) {
    this.maxTokens = maxTokensOf(limits)
  }

  /**
   * Scans the next piece of the text's UTF-8 bytes, as they arrive, without decoding them (JSON's
   * structural characters are ASCII, and no byte of a multi-byte character looks like one).
   * Returns the first problem (its offset in bytes from the first piece), or null. A string's end
   * is found by the native `indexOf`; between strings every byte is looked at once.
   */
  feed(piece: Uint8Array): LimitBreak | null {
    const base = this.base
    this.base += piece.byteLength
    const n = piece.byteLength
    let i = this.inString ? this.endString(piece, base, 0) : 0
    for (; i < n; i++) {
      const c = piece[i]!
      if (STRUCTURAL[c] === 0) continue
      const found = this.token(c, base + i)
      if (found) return found
      if (c === QUOTE) i = this.endString(piece, base, i + 1) - 1
    }
    return null
  }

  /** One bracket, comma or opening quote at `offset`: counted, and the first limit it breaks. */
  private token(c: number, offset: number): LimitBreak | null {
    if (++this.tokens > this.maxTokens) return { kind: 'elements', offset }
    if (c === QUOTE) {
      this.inString = true
      this.structured = true
      this.inKey = this.expectKey
      this.expectKey = false
      if (this.inKey) this.keyStart[this.depth - 1] = offset
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (this.depth === this.limits.maxDepth) return { kind: 'depth', offset }
      if (++this.elements > this.limits.maxElements) return { kind: 'elements', offset }
      this.isObject[this.depth] = c === OPEN_OBJECT
      this.index[this.depth] = 0
      this.keyStart[this.depth] = -1
      this.depth++
      this.expectKey = c === OPEN_OBJECT
      this.structured = false
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (this.depth > 0) this.depth--
      this.expectKey = false
      this.structured = true
    } else {
      const scalarLimit = this.limits.maxArrayScalars
      if (scalarLimit !== undefined && !this.structured && this.depth > 0 && !this.isObject[this.depth - 1]) {
        if (++this.scalars > scalarLimit) return { kind: 'scalars', offset }
      } else if (++this.elements > this.limits.maxElements) return { kind: 'elements', offset }
      this.structured = false
      if (this.depth > 0) {
        if (this.isObject[this.depth - 1]) this.expectKey = true
        else this.index[this.depth - 1]!++
      }
    }
    return null
  }

  /**
   * The keys and indexes down to the innermost open container, read from `bytes` (everything fed
   * so far). Called after a depth problem.
   */
  path(bytes: Uint8Array): string[] {
    const path: string[] = []
    for (let level = 0; level < this.depth; level++) {
      if (!this.isObject[level]) {
        path.push(String(this.index[level]))
        continue
      }
      const start = this.keyStart[level]!
      // An object with no key yet (`{{`) is not JSON; the path ends where it stops making sense.
      if (start < 0) break
      path.push(keyText(bytes, start, this.keyEnd[level]!))
    }
    return path
  }

  /**
   * Looks for the quote closing the current string, from `from` in `piece`: returns the index after
   * it (string mode left), or the piece's length when the string goes on past it (string mode kept,
   * a trailing escape remembered). Each backslash run is walked once, between two quotes, so the
   * whole scan stays linear.
   */
  private endString(piece: Uint8Array, base: number, from: number): number {
    let start = from
    if (this.escaped) {
      this.escaped = false
      start++
    }
    let q = start - 1
    for (;;) {
      q = piece.indexOf(QUOTE, q + 1)
      const end = q === -1 ? piece.byteLength : q
      let run = 0
      for (let k = end - 1; k >= start && piece[k] === BACKSLASH; k--) run++
      if (q === -1) {
        this.escaped = (run & 1) === 1
        return piece.byteLength
      }
      if ((run & 1) === 0) break
    }
    if (this.inKey) this.keyEnd[this.depth - 1] = base + q
    this.inString = false
    return q + 1
  }
}

/** The key quoted from byte `start` to byte `end`, decoded; cut after `KEY_SHOWN` characters. */
function keyText(bytes: Uint8Array, start: number, end: number): string {
  // A character is at most 4 bytes: the first KEY_SHOWN of a long key are within these.
  const whole = end - start <= 1 + 4 * KEY_SHOWN
  const head = UTF8.decode(bytes.subarray(start, whole ? end + 1 : start + 2 + 4 * KEY_SHOWN))
  const quoted =
    whole && head.length - 2 <= KEY_SHOWN ? head : `${head.slice(0, 1 + KEY_SHOWN).replace(/\\+$/, '')}"`
  try {
    return JSON.parse(quoted) as string
  } catch {
    return quoted.slice(1, -1)
  }
}

/**
 * True when `text` breaks none of `limits` — the same answer as `checkJsonStructure(text) === null`
 * — found by a plain character loop that remembers nothing but three counters. For a text already
 * whole in memory (a small request body) it needs no bytes, where the scanner reads the text's
 * UTF-8 encoding; the scanner then runs only on a text that fails here, to say where. Linear: each character is looked at once (a string's backslash runs are
 * walked between two quotes, as in the scanner).
 */
export function withinJsonLimits(text: string, limits: JsonLimits = DEFAULT_JSON_LIMITS): boolean {
  const maxTokens = maxTokensOf(limits)
  const { maxDepth, maxElements } = limits
  const scalarLimit = limits.maxArrayScalars ?? 0
  // Which open containers are arrays: only kept where scalars have their own limit.
  const arrays = limits.maxArrayScalars === undefined ? null : new Uint8Array(maxDepth)
  let depth = 0
  let elements = 0
  let scalars = 0
  let tokens = 0
  let structured = false
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      tokens++
      structured = true
      let q = i
      for (;;) {
        q = text.indexOf('"', q + 1)
        if (q === -1) return tokens <= maxTokens && elements <= maxElements && scalars <= scalarLimit
        let run = 0
        for (let k = q - 1; k > i && text.charCodeAt(k) === BACKSLASH; k--) run++
        if ((run & 1) === 0) break
      }
      i = q
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      tokens++
      if (depth === maxDepth) return false
      elements++
      if (arrays) arrays[depth] = c === OPEN_ARRAY ? 1 : 0
      depth++
      structured = false
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      tokens++
      if (depth > 0) depth--
      structured = true
    } else if (c === COMMA) {
      tokens++
      if (arrays && !structured && depth > 0 && arrays[depth - 1] === 1) scalars++
      else elements++
      structured = false
    }
  }
  return tokens <= maxTokens && elements <= maxElements && scalars <= scalarLimit
}

/**
 * Brackets, commas and strings a text within `limits` can hold: valid JSON has at most four per
 * element (an opener or comma, its closer, a key and a string value) and one per array scalar.
 */
function maxTokensOf(limits: JsonLimits): number {
  return 4 * limits.maxElements + (limits.maxArrayScalars ?? 0) + 4
}
