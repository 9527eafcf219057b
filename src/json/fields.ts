/**
 * @module
 * Edits fields of a JSON text without re-serialising the rest, so that everything else stays byte
 * for byte what the client or the upstream sent. Used by the same-wire relays (pass-through).
 * Strings are skipped with `indexOf` (not char by char), so the cost is in the number of tokens
 * outside strings, not in the length of the text a conversation carries.
 *
 * @example
 * replaceStringField('{"type":"x","response":{"model":"gpt-5"}}', 2, 'model', 'openai/gpt-5')
 * // '{"type":"x","response":{"model":"openai/gpt-5"}}'
 * editTopLevel('{"model":"a/b","stream_options":null,"x":1}', new Map([['model', '"b"'], ['stream_options', null]]), '"max_tokens":5', 3)
 * // '{"max_tokens":5,"model":"b","x":1}'
 */

import { type JsonText, SPLICE_MIN, SplicedText } from './spliced.ts'

const QUOTE = 34
const BACKSLASH = 92

/**
 * The text with the first string value of `key` found at object depth `depth` (1 = the top-level
 * object's own keys) set to `value`. Strings are skipped as a whole, so a `"model"` inside a string
 * or deeper in the tree is never touched. Returns `json` unchanged when there is no such field.
 */
export function replaceStringField(json: string, depth: number, key: string, value: string): string {
  const quotedKey = JSON.stringify(key)
  let level = 0
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i)
    if (c === QUOTE) {
      const end = stringEnd(json, i)
      if (level === depth && json.startsWith(quotedKey, i) && end === i + quotedKey.length - 1) {
        let j = end + 1
        while (isJsonSpace(json.charCodeAt(j))) j++
        if (json.charCodeAt(j) === 58 /* : */) {
          j++
          while (isJsonSpace(json.charCodeAt(j))) j++
          if (json.charCodeAt(j) === QUOTE) {
            return json.slice(0, j) + JSON.stringify(value) + json.slice(stringEnd(json, j) + 1)
          }
        }
      }
      i = end
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      level++
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      level--
    }
  }
  return json
}

/**
 * The top-level fields of a JSON object text, four numbers each: key start (its opening quote),
 * key end (after its closing quote), value start, value end (after its last character). Null when
 * the text does not hold one well-nested object. The text is assumed to be valid JSON otherwise
 * (it was parsed before): this finds where things are, it does not validate.
 */
export function topLevelFields(json: string): number[] | null {
  let i = skipSpace(json, 0)
  if (json.charCodeAt(i) !== 123 /* { */) return null
  const spans: number[] = []
  let depth = 1
  let expectKey = true
  let lastSolid = i
  for (i++; i < json.length; i++) {
    const c = json.charCodeAt(i)
    if (c === QUOTE) {
      const end = stringEnd(json, i)
      if (end >= json.length) return null
      if (depth === 1 && expectKey) {
        let j = skipSpace(json, end + 1)
        if (json.charCodeAt(j) !== 58 /* : */) return null
        j = skipSpace(json, j + 1)
        spans.push(i, end + 1, j, -1)
        expectKey = false
        i = j - 1
        continue
      }
      i = end
      lastSolid = end
      continue
    }
    if (c === 123 || c === 91) {
      depth++
    } else if (c === 125 || c === 93) {
      depth--
      if (depth === 0) {
        if (spans.length) spans[spans.length - 1] = lastSolid + 1
        return spans
      }
    } else if (c === 44 /* , */ && depth === 1) {
      spans[spans.length - 1] = lastSolid + 1
      expectKey = true
      continue
    } else if (isJsonSpace(c)) {
      continue
    }
    lastSolid = i
  }
  return null
}

/**
 * The object text with its top-level fields edited in one pass: `edits` maps a key to its new
 * value's JSON text, or to null to remove the field; `insert` (fields' JSON, comma-separated) goes
 * first. Key order, spacing and every other byte are kept.
 *
 * Returns null — the caller then re-serialises — when the text has not exactly `expectedKeys`
 * top-level keys: duplicated keys (JSON.parse keeps the last, so an edit of the first would not be
 * what the gateway checked) or a text that is not one object. At least one field must remain.
 */
export function editTopLevel(
  json: string,
  edits: ReadonlyMap<string, string | null>,
  insert: string,
  expectedKeys: number,
  /** The text's `topLevelFields`, when the caller has them already. */
  f: number[] | null = topLevelFields(json),
): string | null {
  return editedParts(json, edits, insert, expectedKeys, f)?.join('') ?? null
}

/**
 * `editTopLevel`, its result kept as its pieces (views of `json` and the edits) when `json` has
 * `SPLICE_MIN` characters or more: a large body is then sent upstream without a copy of it
 * (`spliced.ts`).
 */
export function spliceTopLevel(
  json: string,
  edits: ReadonlyMap<string, string | null>,
  insert: string,
  expectedKeys: number,
): JsonText | null {
  const parts = editedParts(json, edits, insert, expectedKeys, topLevelFields(json))
  if (parts === null) return null
  return json.length >= SPLICE_MIN ? new SplicedText(parts) : parts.join('')
}

function editedParts(
  json: string,
  edits: ReadonlyMap<string, string | null>,
  insert: string,
  expectedKeys: number,
  f: number[] | null,
): string[] | null {
  if (f === null || f.length !== expectedKeys * 4) return null
  // An empty object: only the insert goes in (after its brace; there is no first key to put it before).
  if (f.length === 0) {
    const open = json.indexOf('{')
    return [json.slice(0, open + 1), insert, json.slice(open + 1)]
  }
  const out = [json.slice(0, f[0]!)]
  if (insert) out.push(`${insert},`)
  let from = f[0]!
  let keptAny = insert !== ''
  for (let n = 0; n < f.length; n += 4) {
    const keyStart = f[n]!
    const edit = edits.get(keyName(json, keyStart, f[n + 1]!))
    if (edit === undefined) {
      keptAny = true
      continue
    }
    if (edit !== null) {
      out.push(json.slice(from, f[n + 2]!), edit)
      from = f[n + 3]!
      keptAny = true
    } else if (keptAny) {
      // Take the comma before the field with it.
      out.push(json.slice(from, f[n - 1]!))
      from = f[n + 3]!
    } else {
      // Nothing kept before it: take the comma after it instead.
      from = n + 4 < f.length ? f[n + 4]! : f[n + 3]!
    }
  }
  out.push(json.slice(from))
  return out
}

/**
 * The object text with top-level fields set (key → the value's JSON text): replaced where the key
 * is there, else added first, every other byte as it was — one scan that skips strings whole, not
 * a second parse of a body as large as the client's. A text that is not one object is
 * re-serialised instead.
 *
 * @example
 * setTopLevel('{"model":"m","stream":false}', { stream: 'true', n: '2' }) // '{"n":2,"model":"m","stream":true}'
 */
export function setTopLevel(json: string, values: Readonly<Record<string, string>>): string {
  const f = topLevelFields(json)
  if (f !== null) {
    const present = new Set<string>()
    for (let n = 0; n < f.length; n += 4) present.add(keyName(json, f[n]!, f[n + 1]!))
    const edits = new Map<string, string>()
    const insert: string[] = []
    for (const [key, value] of Object.entries(values)) {
      if (present.has(key)) edits.set(key, value)
      else insert.push(`${JSON.stringify(key)}:${value}`)
    }
    const edited = editTopLevel(json, edits, insert.join(','), f.length / 4, f)
    if (edited !== null) return edited
  }
  const parsed = JSON.parse(json) as Record<string, unknown>
  for (const [key, value] of Object.entries(values)) parsed[key] = JSON.parse(value)
  return JSON.stringify(parsed)
}

/** The JSON text of the (last, as JSON.parse reads it) top-level field `key`'s value, or undefined. */
export function topLevelValue(json: string, key: string): string | undefined {
  const f = topLevelFields(json)
  let value: string | undefined
  for (let n = 0; f && n < f.length; n += 4)
    if (keyName(json, f[n]!, f[n + 1]!) === key) value = json.slice(f[n + 2]!, f[n + 3]!)
  return value
}

/**
 * A request body asking for a stream: `"stream": true` and each of `also` set (`setTopLevel`).
 *
 * @example
 * streamingBody('{"model":"m","stream":false}', { stream_options: '{"include_usage":true}' })
 * // '{"stream_options":{"include_usage":true},"model":"m","stream":true}'
 */
export const streamingBody = (json: string, also: Readonly<Record<string, string>> = {}): string =>
  setTopLevel(json, { stream: 'true', ...also })

/** A key's name; keys written with escapes (`"mod\u0065l"`) are decoded, as JSON.parse does. */
function keyName(json: string, start: number, end: number): string {
  const raw = json.slice(start + 1, end - 1)
  return raw.includes('\\') ? (JSON.parse(json.slice(start, end)) as string) : raw
}

/** Index of the quote that closes the string opening at `start` (`json.length` if none). */
export function stringEnd(json: string, start: number): number {
  let i = start
  for (;;) {
    i = json.indexOf('"', i + 1)
    if (i === -1) return json.length
    let b = i - 1
    while (json.charCodeAt(b) === BACKSLASH) b--
    if ((i - 1 - b) % 2 === 0) return i
  }
}

function skipSpace(json: string, i: number): number {
  while (isJsonSpace(json.charCodeAt(i))) i++
  return i
}

function isJsonSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13
}
