/**
 * @module
 * Finds where a JSON text goes wrong. Bun's `JSON.parse` says *what* failed but not *where*; this
 * scanner runs only after `JSON.parse` has already failed, to point the client at the line and column.
 * It is iterative (no recursion) and stops at `maxDepth` open containers, so its time is linear in
 * the text and its memory bounded, whatever the input.
 *
 * @example
 * findJsonSyntaxError('{"a": 1,}') // { offset: 7, reason: 'a trailing comma' }
 */

export interface JsonSyntaxProblem {
  /** Index into the text (UTF-16 code units) of the first character that cannot be valid JSON. */
  offset: number
  /** What is wrong there, as a noun phrase: "a trailing comma", "an unterminated string", ... */
  reason: string
}

const WS = /[ \t\n\r]*/y
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
const STRING_STOP = /["\\\u0000-\u001f]/g
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y
/** A word is only quoted in a message: 10 MB of letters need not be copied to say so. */
const WORD = /[A-Za-z_$][A-Za-z0-9_$]{0,39}/y
const LITERALS = new Set(['true', 'false', 'null'])

function skipWs(text: string, at: number): number {
  WS.lastIndex = at
  WS.test(text)
  return WS.lastIndex
}

/** Returns the offset just past a string starting at `at` (a `"`), or a problem. */
function scanString(text: string, at: number): number | JsonSyntaxProblem {
  let i = at + 1
  for (;;) {
    STRING_STOP.lastIndex = i
    const stop = STRING_STOP.exec(text)
    if (!stop) return { offset: at, reason: 'an unterminated string' }
    i = stop.index
    const ch = text[i]
    if (ch === '"') return i + 1
    if (ch !== '\\')
      return { offset: i, reason: 'a raw control character inside a string (escape it, e.g. \\n)' }
    ESCAPE.lastIndex = i
    if (!ESCAPE.test(text)) return { offset: i, reason: 'an invalid escape sequence in a string' }
    i = ESCAPE.lastIndex
  }
}

/** Returns the offset just past a scalar (number or literal) starting at `at`, or a problem. */
function scanScalar(text: string, at: number): number | JsonSyntaxProblem {
  const ch = text[at]
  if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) {
    NUMBER.lastIndex = at
    if (NUMBER.test(text)) return NUMBER.lastIndex
    if (text.startsWith('-Infinity', at))
      return { offset: at, reason: '-Infinity, which JSON does not allow' }
    return { offset: at, reason: 'an invalid number' }
  }
  WORD.lastIndex = at
  const word = WORD.exec(text)?.[0]
  if (word !== undefined && LITERALS.has(word)) return at + word.length
  if (word === 'NaN' || word === 'Infinity' || word === 'undefined') {
    return { offset: at, reason: `${word}, which JSON does not allow (send a number or null)` }
  }
  if (word !== undefined) return { offset: at, reason: `an unexpected word "${word.slice(0, 20)}"` }
  if (ch === "'") return { offset: at, reason: 'a single quote (JSON strings use double quotes)' }
  if (ch === '\uFEFF') return { offset: at, reason: 'a byte order mark' }
  return { offset: at, reason: `an unexpected character ${JSON.stringify(ch)}` }
}

/**
 * Returns the first syntax problem in `text`, or `null` when the scanner finds none (then the text
 * is valid JSON, or `JSON.parse` failed for a reason the scanner does not model).
 */
export function findJsonSyntaxError(text: string, maxDepth = 10_000): JsonSyntaxProblem | null {
  /** Open containers: `{` or `[`. */
  const stack: string[] = []
  let i = skipWs(text, 0)
  if (i >= text.length) return { offset: i, reason: 'an empty body' }
  // Expecting a value (after `[`, `,` in an array, `:` in an object, or at the start).
  let wantValue = true
  for (;;) {
    i = skipWs(text, i)
    const ch = text[i]
    if (ch === undefined) {
      return stack.length || wantValue
        ? { offset: i, reason: 'the end of the body (it looks truncated)' }
        : null
    }
    if (wantValue) {
      if (ch === '{' || ch === '[') {
        if (stack.length === maxDepth) return { offset: i, reason: `nesting deeper than ${maxDepth} levels` }
        stack.push(ch)
        i = skipWs(text, i + 1)
        if (text[i] === (ch === '{' ? '}' : ']')) {
          stack.pop()
          i++
          wantValue = false
          continue
        }
        if (ch === '{') {
          const key = expectKey(text, i)
          if (typeof key !== 'number') return key
          i = key
        }
        continue
      }
      if (ch === '}' || ch === ']')
        return { offset: i, reason: `an unexpected "${ch}" where a value belongs` }
      const end = ch === '"' ? scanString(text, i) : scanScalar(text, i)
      if (typeof end !== 'number') return end
      i = end
      wantValue = false
      continue
    }
    const open = stack[stack.length - 1]
    if (open === undefined) return { offset: i, reason: 'more text after the end of the JSON value' }
    const close = open === '{' ? '}' : ']'
    if (ch === close) {
      stack.pop()
      i++
      continue
    }
    if (ch !== ',') return { offset: i, reason: `${JSON.stringify(ch)} where "," or "${close}" belongs` }
    const next = skipWs(text, i + 1)
    if (text[next] === '}' || text[next] === ']') return { offset: i, reason: 'a trailing comma' }
    i = next
    if (open === '{') {
      const key = expectKey(text, i)
      if (typeof key !== 'number') return key
      i = key
    }
    wantValue = true
  }
}

/** Scans `"key" :` at `at`; returns the offset after the colon. */
function expectKey(text: string, at: number): number | JsonSyntaxProblem {
  if (text[at] !== '"') {
    if (at >= text.length) return { offset: at, reason: 'the end of the body (it looks truncated)' }
    return { offset: at, reason: 'a property name that is not a double-quoted string' }
  }
  const end = scanString(text, at)
  if (typeof end !== 'number') return end
  const colon = skipWs(text, end)
  if (text[colon] !== ':') {
    if (colon >= text.length) return { offset: colon, reason: 'the end of the body (it looks truncated)' }
    return { offset: colon, reason: 'a missing ":" after a property name' }
  }
  return colon + 1
}

/** 1-based line and column of `offset`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let nl = text.indexOf('\n'); nl !== -1 && nl < offset; nl = text.indexOf('\n', nl + 1)) {
    line++
    lineStart = nl + 1
  }
  return { line, column: offset - lineStart + 1 }
}
