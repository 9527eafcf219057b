/**
 * @module
 * `JSON.parse` whose long strings are views of the text they were parsed from, not copies (DESIGN
 * §16: a body costs about its own size while in flight). A request keeps its text (a pass-through
 * provider is sent it byte for byte) and its parsed value; `JSON.parse` copies every string, so a
 * 10 MB message or base64 image was held twice. Here each string value of `SHARED_MIN` characters
 * or more written without an escape is cut out of the text before `JSON.parse` sees it, and put
 * back as `text.slice(...)`: JavaScriptCore's substrings share the text's characters (measured:
 * 20 texts of 10 MB with their parsed values, 20.6 MB each by `JSON.parse`, 10.7 MB each here).
 *
 * A long string with an escape (`\n`, `\u00e9`) is parsed as before, a copy of its decoded
 * characters: a view cannot unescape; so is one holding a raw control character, for
 * `JSON.parse` to refuse. Keys are always parsed (they become property names).
 *
 * @example
 * const text = `{"messages":[{"role":"user","content":"${'a'.repeat(1 << 20)}"}]}`
 * parseSharingStrings(text) // deep-equals JSON.parse(text); its content shares text's memory
 */
import { stringEnd } from './fields.ts'

/** Shorter strings are copied, as `JSON.parse` does: a copy that small costs nothing worth a view. */
export const SHARED_MIN = 16 * 1024

/**
 * What stands for a cut string in the text `JSON.parse` sees: this prefix and the string's index.
 * Random per process, and led by a control character a client would have to escape: a client's
 * own string cannot be taken for one without knowing it.
 */
const MARK = `\u0000switchyard-view-${crypto.randomUUID()}:`

/**
 * `JSON.parse(text)`, its long unescaped string values (`min` characters or more) views of `text`.
 * Throws as `JSON.parse` does.
 */
export function parseSharingStrings(text: string, min = SHARED_MIN): unknown {
  if (text.length < min) return JSON.parse(text)
  const spans = longStringValues(text, min)
  if (spans.length === 0) return JSON.parse(text)
  const parts: string[] = []
  let at = 0
  for (let k = 0; k < spans.length; k += 2) {
    parts.push(text.slice(at, spans[k]!), JSON.stringify(MARK + k / 2))
    at = spans[k + 1]! + 1
  }
  parts.push(text.slice(at))
  let value: unknown
  try {
    value = JSON.parse(parts.join(''))
  } catch {
    // The same error as `JSON.parse` gives the client's text (positions are the text's).
    return JSON.parse(text)
  }
  const view = (marked: string) => {
    const k = 2 * Number(marked.slice(MARK.length))
    return text.slice(spans[k]! + 1, spans[k + 1]!)
  }
  if (typeof value === 'string') return value.startsWith(MARK) ? view(value) : value
  restoreViews(value, spans.length / 2, view)
  return value
}

/**
 * What a view cannot stand for: an escape (to decode), or a raw control character, which JSON
 * refuses in a string (`JSON.parse` must see it to refuse the body).
 */
const ESCAPED_OR_RAW = /[\\\u0000-\u001f]/

/**
 * Where the long string values of `text` are: pairs of offsets of their opening and closing quotes.
 * Linear: strings are skipped with `indexOf`; what lies between them holds no quote.
 */
function longStringValues(text: string, min: number): number[] {
  const spans: number[] = []
  for (let open = text.indexOf('"'); open !== -1; ) {
    const close = stringEnd(text, open)
    if (close >= text.length) break
    if (close - open - 1 >= min && !isKey(text, close) && !ESCAPED_OR_RAW.test(text.slice(open + 1, close)))
      spans.push(open, close)
    open = text.indexOf('"', close + 1)
  }
  return spans
}

/** The string closing at `close` is a key: a colon follows it. */
function isKey(text: string, close: number): boolean {
  let j = close + 1
  for (let c = text.charCodeAt(j); c === 32 || c === 9 || c === 10 || c === 13; c = text.charCodeAt(++j)) {}
  return text.charCodeAt(j) === 58 /* : */
}

/** Puts the `count` views back where `JSON.parse` left their marks; stops once all are back. */
function restoreViews(root: unknown, count: number, view: (marked: string) => string): void {
  let left = count
  const stack: unknown[] = [root]
  while (stack.length && left > 0) {
    const node = stack.pop()
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v = node[i]
        if (typeof v === 'string') {
          if (v.startsWith(MARK)) {
            node[i] = view(v)
            left--
          }
        } else if (v !== null && typeof v === 'object') stack.push(v)
      }
    } else if (node !== null && typeof node === 'object') {
      const o = node as Record<string, unknown>
      for (const k in o) {
        const v = o[k]
        if (typeof v === 'string') {
          if (v.startsWith(MARK)) {
            // `__proto__` is an own data property of a parsed object: define it, do not assign it.
            Object.defineProperty(o, k, {
              value: view(v),
              writable: true,
              enumerable: true,
              configurable: true,
            })
            left--
          }
        } else if (v !== null && typeof v === 'object') stack.push(v)
      }
    }
  }
}
