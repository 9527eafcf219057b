/**
 * @module
 * Replaces one string field of a JSON text without re-serialising the rest, so that everything
 * else stays byte for byte what the upstream sent.
 *
 * @example
 * replaceStringField('{"type":"x","response":{"model":"gpt-5"}}', 2, 'model', 'openai/gpt-5')
 * // '{"type":"x","response":{"model":"openai/gpt-5"}}'
 */

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
        while (isSpace(json.charCodeAt(j))) j++
        if (json.charCodeAt(j) === 58 /* : */) {
          j++
          while (isSpace(json.charCodeAt(j))) j++
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

/** Index of the quote that closes the string opening at `start`. */
function stringEnd(json: string, start: number): number {
  for (let i = start + 1; i < json.length; i++) {
    const c = json.charCodeAt(i)
    if (c === BACKSLASH) i++
    else if (c === QUOTE) return i
  }
  return json.length
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13
}
