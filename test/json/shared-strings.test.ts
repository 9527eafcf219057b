/**
 * `parseSharingStrings` (DESIGN §16): the value `JSON.parse` gives, its long unescaped strings views
 * of the text (a few bytes each, by JavaScriptCore's own estimate) rather than copies.
 */
import { estimateShallowMemoryUsageOf } from 'bun:jsc'
import { describe, expect, test } from 'bun:test'
import { parseJsonBody } from '../../src/json/parse-json-body.ts'
import { parseSharingStrings, SHARED_MIN } from '../../src/json/shared-strings.ts'

const LONG = 'a'.repeat(SHARED_MIN)
const size = (s: unknown) => estimateShallowMemoryUsageOf(s as object)

describe('parseSharingStrings', () => {
  test('the value JSON.parse gives, for long and short strings wherever they are', () => {
    const texts = [
      `{"model":"m","messages":[{"role":"user","content":"${LONG}"}]}`,
      `"${LONG}"`,
      `[ "${LONG}" , {"k" : "${LONG}b"}, 1, null, true, "short"]`,
      // A long key stays a key; a long string with an escape is parsed (a view cannot unescape).
      `{"${LONG}": 1, "x": "${LONG}\\n${LONG}", "y": "\\u00e9${LONG}"}`,
      // An own `__proto__` member keeps its string, and the prototype stays Object's.
      `{"__proto__": "${LONG}", "z": "${LONG}"}`,
      // Non-ASCII text (a 16-bit string) and whitespace around members.
      `{ "c" :\n "é${LONG}中" }`,
      '{"small": "x"}',
    ]
    for (const text of texts) {
      const got = parseSharingStrings(text)
      expect(got).toEqual(JSON.parse(text))
      if (got && typeof got === 'object')
        expect(Object.getPrototypeOf(got)).toBe(Object.getPrototypeOf(JSON.parse(text)))
    }
    const proto = parseSharingStrings(`{"__proto__": "${LONG}"}`) as Record<string, unknown>
    expect(Object.hasOwn(proto, '__proto__')).toBe(true)
    expect(Object.getOwnPropertyDescriptor(proto, '__proto__')?.value).toBe(LONG)
  })

  test('long unescaped strings share the text; escaped ones and short ones are copies', () => {
    const text = `{"messages":[{"role":"user","content":"${LONG}${LONG}"}],"e":"${LONG}\\t"}`
    const copied = JSON.parse(text) as { messages: [{ content: string }]; e: string }
    const viewed = parseSharingStrings(text) as typeof copied
    expect(size(copied.messages[0].content)).toBeGreaterThanOrEqual(2 * SHARED_MIN)
    expect(size(viewed.messages[0].content)).toBeLessThan(1024)
    expect(size(viewed.e)).toBeGreaterThanOrEqual(SHARED_MIN)
  })

  test("a client's string that looks like a mark is its own string", () => {
    const text = `{"a":"${LONG}","b":"\\u0000switchyard-view-00000000-0000-0000-0000-000000000000:0"}`
    expect(parseSharingStrings(text)).toEqual(JSON.parse(text))
  })

  test('invalid JSON throws as JSON.parse does, and parseJsonBody names where', () => {
    const text = `{"a":"${LONG}", "b": }`
    expect(() => parseSharingStrings(text)).toThrow(SyntaxError)
    // A raw line break or tab inside a long string is not JSON, wherever it is.
    for (const raw of ['\n', '\t', '\u0000'])
      expect(() => parseSharingStrings(`{"a":"${LONG}${raw}${LONG}"}`)).toThrow(SyntaxError)
    expect(() => parseJsonBody(text, '{}')).toThrow(/not valid JSON: .* at line 1, column/)
  })
})
