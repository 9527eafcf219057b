/**
 * Counting a client's text with o200k (src/limits/o200k.ts): exact on prose, code and JSON though
 * the tokenizer sees slices; no slice longer than `SLICE` (a run without spaces whole is
 * superlinear: 64 K characters of CJK took 40 s in count_tokens); special tokens' text counted as
 * text (it threw, a 500); counting stops past a bound; nothing kept per piece counted.
 */
import { heapStats } from 'bun:jsc'
import { describe, expect, test } from 'bun:test'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { countO200k, SLICE, sliceEnd } from '../../src/limits/o200k.ts'
import { reportedSamples, syntheticSamples } from '../support/token-corpus.ts'

const count = countO200k
const whole = (text: string) => countTokens(text, { disallowedSpecial: new Set() })

/** Deterministic text from `alphabet` (an array: astral characters are two code units). */
function randomText(chars: number, alphabet: string[], seed = 5): string {
  let s = seed
  const out: string[] = []
  while (out.length < chars) {
    s = (s * 1103515245 + 12345) & 0x7fffffff
    out.push(alphabet[s % alphabet.length]!)
  }
  return out.join('')
}
const LETTERS = [...'abcdefghijklmnopqrstuvwxyz']
const CJK = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(0x4e00 + i))

describe('exact where the pre-tokenizer splits', () => {
  const texts: [string, string][] = [
    ...reportedSamples().map((s): [string, string] => [s.name, s.body]),
    ...syntheticSamples(16_384)
      .filter((s) => /english|typescript|json|russian|korean|hindi/.test(s.name))
      .map((s): [string, string] => [s.name, s.body]),
    ['minified JSON of a tool list', JSON.stringify(reportedSamples().map((s) => JSON.parse(s.body)))],
  ]
  for (const [name, text] of texts) {
    test(`${name} (${text.length} characters): the sliced count is the whole count`, () => {
      expect(text.length).toBeGreaterThan(0)
      expect(count(text)).toEqual({ tokens: whole(text), chars: text.length })
    })
  }
})

describe('slices', () => {
  const kinds: [string, string][] = [
    ['letters without a space', randomText(20_000, LETTERS)],
    ['CJK without a space', randomText(20_000, CJK)],
    ['emoji (surrogate pairs) without a space', randomText(10_000, [...'😀🎉🚀👍🔥'])],
    ['prose', syntheticSamples(20_000)[0]!.body],
  ]
  for (const [name, text] of kinds) {
    test(`${name}: at most ${SLICE} characters each, covering the text, no pair split`, () => {
      let pieces = 0
      for (let from = 0; from < text.length; ) {
        const end = sliceEnd(text, from)
        expect(end).toBeGreaterThan(from)
        expect(end - from).toBeLessThanOrEqual(SLICE)
        const last = text.charCodeAt(end - 1)
        // A slice never ends on the first half of a surrogate pair.
        if (end < text.length) expect(last >= 0xd800 && last <= 0xdbff).toBe(false)
        from = end
        pieces++
      }
      expect(pieces).toBeGreaterThanOrEqual(Math.ceil(text.length / SLICE))
    })
  }

  test('a run without a place to split is cut at SLICE, and the slices by a cut count their UTF-8 bytes', () => {
    const text = randomText(8_000, CJK)
    expect(sliceEnd(text, 0)).toBe(SLICE)
    const sliced = count(text).tokens
    expect(sliced).toBeGreaterThanOrEqual(whole(text))
    expect(sliced).toBe(Buffer.byteLength(text))
    // Only the slices on either side of a cut: 300 letters, then prose (the rest of it exact).
    const prose = ' and then a sentence that splits where words end.'.repeat(20)
    const mixed = randomText(300, LETTERS) + prose
    const second = sliceEnd(mixed, SLICE)
    expect(second).toBeGreaterThan(300)
    expect(count(mixed).tokens).toBe(second + whole(mixed.slice(second)))
  })
})

test('never under the whole count: 3,000 random letter runs of 257–3,000 characters (a slice cut where no piece ends counted 1 short per cut)', () => {
  let s = 58
  const next = () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff
    return s / 0x80000000
  }
  const short: string[] = []
  for (let i = 0; i < 3_000; i++) {
    const n = 257 + Math.floor(next() * 2_744)
    const text = Array.from({ length: n }, () => LETTERS[Math.floor(next() * 26)]).join('')
    const sliced = count(text).tokens
    const want = whole(text)
    if (sliced < want && short.push(`${n} letters: ${sliced}, whole ${want}`) >= 5) break
  }
  expect(short).toEqual([])
})

test("special tokens' text counts as text (gpt-tokenizer's default throws on it)", () => {
  expect(() => countTokens('<|endoftext|>')).toThrow()
  expect(count('<|endoftext|>').tokens).toBe(7)
  const text = 'Training data ends with <|endoftext|>, chats open with <|im_start|>user.'
  expect(count(text).tokens).toBe(whole(text))
})

test('counting stops after the slice that passes stopAbove', () => {
  const text = randomText(50_000, LETTERS)
  const { tokens, chars } = count(text, 1_000)
  expect(tokens).toBeGreaterThan(1_000)
  expect(tokens).toBeLessThanOrEqual(1_000 + SLICE)
  expect(chars).toBeLessThan(4 * SLICE + 1_000 * 4)
  expect(count('short', 1_000)).toEqual({ tokens: whole('short'), chars: 5 })
})

test('nothing is kept per piece: 100,000 different words leave no objects behind (a merge cache of chosen pieces held 440 MB)', () => {
  // Words no vocabulary has whole (each is merged), all different.
  const word = (i: number) =>
    `qz${[...i.toString(26).padStart(4, '0')].map((d) => LETTERS[parseInt(d, 26)]).join('')}x`
  const text = Array.from({ length: 100_000 }, (_, i) => word(i)).join(' ')
  count(text.slice(0, 10_000))
  Bun.gc(true)
  const before = heapStats().objectCount
  expect(count(text).tokens).toBeGreaterThan(200_000)
  Bun.gc(true)
  expect(heapStats().objectCount - before).toBeLessThan(1_000)
})
