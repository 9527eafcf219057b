import { describe, expect, test } from 'bun:test'
import { checkJsonStructure, withinJsonLimits } from '../../src/json/limits.ts'
import { mulberry32 } from '../support/malformed-bodies.ts'

/** Random texts over JSON's structural alphabet (escapes, quotes, brackets, commas) and filler. */
function randomText(rand: () => number, length: number): string {
  const alphabet = ['"', '\\', '[', ']', '{', '}', ',', 'a', ' ', ':', '1', '\\"', '\\\\', '"k":']
  let s = ''
  while (s.length < length) s += alphabet[Math.floor(rand() * alphabet.length)]
  return s
}

describe('withinJsonLimits: the same answer as checkJsonStructure(text) === null', () => {
  test('on the cases the scanner is pinned by', () => {
    const limits = { maxDepth: 3, maxElements: 10 }
    const cases = [
      '{"a": [1, {"b": {}}]}',
      '{"a": [1, {"b": 2}]}',
      '[[[]],[[]],[[]]]',
      '{"k\\"[[[": "[[[[,,,,,,,,,,,,\\\\", "x": "\\"{{{{"}',
      '["\\\\", [[[]]]]',
      `[${'1,'.repeat(9)}1]`,
      `[${'1,'.repeat(10)}1]`,
      `[${'{},'.repeat(10)}{}]`,
      '"unterminated [[[[[[',
      ']]]]]]][[[',
      '',
    ]
    for (const text of cases)
      expect([text, withinJsonLimits(text, limits)]).toEqual([
        text,
        checkJsonStructure(text, limits) === null,
      ])
  })

  test('on 20,000 random texts, small limits and the defaults', () => {
    for (let seed = 1; seed <= 20_000; seed++) {
      const rand = mulberry32(seed)
      const text = randomText(rand, Math.floor(rand() * 60))
      const limits =
        seed % 2
          ? {
              maxDepth: 1 + (seed % 5),
              maxElements: 1 + (seed % 13),
              ...(seed % 3 ? {} : { maxArrayScalars: seed % 7 }),
            }
          : undefined
      const expected = checkJsonStructure(text, limits) === null
      if (withinJsonLimits(text, limits) !== expected)
        throw new Error(`seed ${seed}: ${JSON.stringify(text)}`)
    }
  })

  test('deep and wide texts at the default limits', () => {
    const texts = [
      `${'['.repeat(100)}${']'.repeat(100)}`,
      `${'['.repeat(101)}${']'.repeat(101)}`,
      `[${'1,'.repeat(99_999)}1]`,
      `[${'1,'.repeat(100_000)}1]`,
      `[${'"",'.repeat(99_999)}""]`,
    ]
    expect(texts.map((t) => withinJsonLimits(t))).toEqual([true, false, true, false, true])
    expect(texts.map((t) => checkJsonStructure(t) === null)).toEqual([true, false, true, false, true])
  })

  test('numbers in arrays held apart (maxArrayScalars): the same answer as the scanner', () => {
    const limits = { maxDepth: 4, maxElements: 4, maxArrayScalars: 5 }
    const cases = [
      `[${'1,'.repeat(5)}1]`,
      `[${'1,'.repeat(6)}1]`,
      `[${'"a",'.repeat(3)}"a"]`,
      `[${'"a",'.repeat(4)}"a"]`,
      `{"a":1,"b":2,"c":3,"d":4,"e":5}`,
      `[[1,2,3],[4,5,6]]`,
      `[[1,2,3],[4,5,6],[7]]`,
      `[{"a":1},2,3]`,
      `[true,null,false,1,2,3]`,
    ]
    const answers = cases.map((t) => withinJsonLimits(t, limits))
    expect(answers).toEqual(cases.map((t) => checkJsonStructure(t, limits) === null))
    expect(answers).toEqual([true, false, true, false, false, true, false, true, true])
  })
})
