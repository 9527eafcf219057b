import { describe, expect, test } from 'bun:test'
import {
  checkJsonStructure,
  JsonStructureScanner,
  MAX_JSON_DEPTH,
  MAX_JSON_ELEMENTS,
} from '../../src/json/limits.ts'
import { parseJsonObject } from '../../src/json/parse-json-body.ts'
import { findJsonSyntaxError } from '../../src/json/syntax.ts'
import { CHAT_EXAMPLE } from '../../src/surfaces/chat/validate.ts'
import { gatewayError } from '../surfaces/chat/helpers.ts'

/** The chat surface's parse: the JSON object, its messages quoting the chat example. */
const parseChatBody = (text: string) => parseJsonObject(text, CHAT_EXAMPLE)

const limits = { maxDepth: 3, maxElements: 10 }

describe('checkJsonStructure', () => {
  test('depth: the path names the keys and indexes down to the container one level too deep', () => {
    expect(checkJsonStructure('{"a": [1, {"b": {}}]}', limits)).toEqual({
      kind: 'depth',
      offset: 16,
      path: ['a', '1', 'b'],
    })
    expect(checkJsonStructure('{"a": [1, {"b": 2}]}', limits)).toBeNull()
    expect(checkJsonStructure('[[[]],[[]],[[]]]', limits)).toBeNull()
  })

  test('brackets, commas and quotes inside strings (escaped quotes too) are not structure', () => {
    expect(checkJsonStructure('{"k\\"[[[": "[[[[,,,,,,,,,,,,\\\\", "x": "\\"{{{{"}', limits)).toBeNull()
    // An escaped backslash before the quote ends the string; the brackets after it count.
    expect(checkJsonStructure('["\\\\", [[[]]]]', limits)?.kind).toBe('depth')
  })

  test('elements: opening brackets and commas beyond the limit', () => {
    expect(checkJsonStructure(`[${'1,'.repeat(9)}1]`, limits)).toBeNull()
    expect(checkJsonStructure(`[${'1,'.repeat(10)}1]`, limits)).toEqual({ kind: 'elements', offset: 20 })
    expect(checkJsonStructure(`[${'{},'.repeat(10)}{}]`, limits)?.kind).toBe('elements')
  })

  test('a long or escaped key is shown decoded and cut', () => {
    const key = `${'k'.repeat(200)}`
    const deep = checkJsonStructure(`{"${key}": {"\\u0041": {"x": {}}}}`, limits)
    expect(deep).toMatchObject({ kind: 'depth' })
    const path = (deep as { path: string[] }).path
    expect(path[0]!.length).toBeLessThanOrEqual(64)
    expect(path.slice(1)).toEqual(['A', 'x'])
  })

  test('past 64 K of multi-byte text, a key with a surrogate pair across that point: same offset, key whole', () => {
    // The text is encoded 64 K characters at a time: the same problem, at the same character, as in
    // an ASCII text of the same length, and the key's pair not cut in two.
    const around = (key: string) =>
      `{"s":"${'é'.repeat(65_535 - 9)}","${key}":${'['.repeat(150)}${']'.repeat(150)}, "t":"${'€'.repeat(9)}"}`
    const ascii = checkJsonStructure(around('ab').replace(/[é€]/g, 'e'))
    expect(ascii).toMatchObject({ kind: 'depth', path: ['ab', ...Array(99).fill('0')] })
    expect(checkJsonStructure(around('😀'))).toEqual({
      kind: 'depth',
      offset: ascii!.offset,
      path: ['😀', ...Array(99).fill('0')],
    })
  })

  test('hostile bodies stop at the limit instead of being read to the end', () => {
    const size = 10 * 1024 * 1024
    const bracket = '['.repeat(size)
    expect(checkJsonStructure(bracket)).toMatchObject({ kind: 'depth', offset: MAX_JSON_DEPTH })
    expect(checkJsonStructure('{"a":'.repeat(size / 5))).toMatchObject({
      kind: 'depth',
      path: Array(MAX_JSON_DEPTH).fill('a'),
    })
    expect(checkJsonStructure(`[${'{},'.repeat(size / 3)}`)).toMatchObject({ kind: 'elements' })
    // Unbalanced closers and an unterminated string cannot make it throw or loop.
    expect(checkJsonStructure(']]]}}},,"', limits)).toBeNull()
    expect(checkJsonStructure(`${']]]'.repeat(10)}[[[[`, limits)).toMatchObject({
      kind: 'depth',
      path: ['0', '0', '0'],
    })
    expect(checkJsonStructure('"\\')).toBeNull()
  })
})

describe('parseChatBody on hostile bodies', () => {
  test('10 MB of "[" → 400 invalid_value naming the depth, before any parse', () => {
    const error = gatewayError(() => parseChatBody('['.repeat(10 * 1024 * 1024)), { code: 'invalid_value' })
    expect(error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`)
    expect(error.message).toContain('line 1, column 101')
  })

  test('too many elements → 400 invalid_value with where the limit was passed', () => {
    const text = `{"model": "a/b", "messages": [], "x": [${'0,'.repeat(MAX_JSON_ELEMENTS)}0]}`
    const error = gatewayError(() => parseChatBody(text), { code: 'invalid_value' })
    expect(error.message).toContain(`more than ${MAX_JSON_ELEMENTS} array items`)
  })

  test('a syntax error deep inside the limits is still located', () => {
    const depth = MAX_JSON_DEPTH - 1
    const text = `{"model": "a/b", "x": ${'['.repeat(depth)}1,]${']'.repeat(depth - 1)}}`
    const error = gatewayError(() => parseChatBody(text), { code: 'invalid_json' })
    expect(error.message).toContain('a trailing comma')
  })
})

describe('findJsonSyntaxError is bounded on its own', () => {
  test('it stops at maxDepth open containers', () => {
    expect(findJsonSyntaxError('['.repeat(1000), 50)).toEqual({
      offset: 50,
      reason: 'nesting deeper than 50 levels',
    })
  })

  test('a 1 MB word is quoted by its first letters', () => {
    const problem = findJsonSyntaxError(`{"a": ${'x'.repeat(1 << 20)}}`)
    expect(problem?.reason).toBe(`an unexpected word "${'x'.repeat(20)}"`)
  })
})

describe('JsonStructureScanner fed UTF-8 bytes in pieces: the offset and path of the whole text', () => {
  /** Same verdict and offset as the whole text, however the text is cut. */
  function inPieces(text: string, size: number) {
    const scanner = new JsonStructureScanner(limits)
    const bytes = new TextEncoder().encode(text)
    for (let at = 0; at < bytes.length; at += size) {
      const found = scanner.feed(bytes.subarray(at, at + size))
      if (!found) continue
      const offset = new TextDecoder().decode(bytes.subarray(0, found.offset)).length
      return { ...found, offset, path: found.kind === 'depth' ? scanner.path(bytes) : undefined }
    }
    return null
  }

  test.each([
    '{"a": [1, {"b": {}}]}',
    '{"a\\\\": [1, {"b\\"[[[": {"c": 1}}]}',
    '["\\\\\\\\", "\\\\\\"[[[[", [[[]]]]',
    `{"${'k'.repeat(100)}": {"x": {"y": {}}}}`,
    `{"${'é€😀'.repeat(60)}": {"x": {"y": {}}}}`,
    '{"é€😀\\\\": ["ü[", {"中文\\"[[": {"c": [1]}}]}',
    `[${'1,'.repeat(12)}]`,
    '"unterminated [[[[ \\',
  ])('%s', (text) => {
    const whole = checkJsonStructure(text, limits)
    for (const size of [1, 2, 3, 5, 7, 64]) {
      const got = inPieces(text, size)
      expect(got === null ? null : { ...got, path: got.path ?? undefined }).toEqual(
        whole === null ? null : { ...whole, path: whole.kind === 'depth' ? whole.path : undefined },
      )
    }
  })
})
