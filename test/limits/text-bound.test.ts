/**
 * The text bound by tokenizer family (src/limits/text-bound.ts) on the measured corpus
 * (test/support/token-corpus.ts; the counts of Claude's, Gemini's and Llama's tokenizers pinned in
 * token-corpus-counts.json): never under the family's count on any text, and in the median within
 * 1.25× on prose, code and tool schemas (OpenAI's cl100k models against gpt-tokenizer's count); exact
 * on OpenAI's o200k models; a hostile text encodes no
 * more tokens than valid JSON of its size (byte-pair encoding costs per token encoded).
 */
import { describe, expect, test } from 'bun:test'
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base'
import { countO200k, countPiece } from '../../src/limits/o200k.ts'
import {
  type Family,
  familyOf,
  RUN,
  shapeBound,
  textShape,
  textShapeAsync,
  textTokenBound,
} from '../../src/limits/text-bound.ts'
import { syntheticSamples } from '../support/token-corpus.ts'
import pinned from '../support/token-corpus-counts.json'

const count = countO200k
const counts = pinned as Record<string, Record<string, number>>
/** Whom each family's bound must cover: the provider's tokenizer, or every one measured. */
const BILLERS: Record<Exclude<Family, 'o200k'>, string[]> = {
  cl100k: ['cl100k'],
  claude: ['claude'],
  gemini: ['gemini'],
  any: ['o200k', 'cl100k', 'claude', 'gemini', 'llama2', 'llama3'],
}
const TIGHT = /^(english-prose|typescript-code|json|tool-schemas)/
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

describe('never under, and tight where it matters, on the corpus', () => {
  const samples = syntheticSamples()
  for (const [family, billers] of Object.entries(BILLERS) as [Family, string[]][]) {
    test(`${family}: at least ${billers.join(', ')} on every text; median ≤ 1.25× on prose, code and tool schemas`, () => {
      const tight: number[] = []
      for (const s of samples) {
        const billed = Math.max(...billers.map((b) => counts[s.name]![b]!))
        const bound = shapeBound(textShape(s.text), family)
        if (bound < billed) throw new Error(`${s.name}: ${bound} < ${billed}`)
        if (TIGHT.test(s.kind)) tight.push(bound / billed)
      }
      expect(tight.length).toBeGreaterThanOrEqual(11)
      expect(median(tight)).toBeLessThanOrEqual(1.25)
      // Each one too, not only the median (the factor leaves about 10–20 %; cl100k, within 2.4 % of
      // o200k on these, 5–10 %).
      expect(Math.max(...tight)).toBeLessThan(family === 'cl100k' ? 1.11 : 1.3)
    })
  }

  test('o200k: the exact count where no run is long, never under where one is', () => {
    for (const s of samples) {
      const bound = shapeBound(textShape(s.text), 'o200k')
      const exact = o200k(s.text, { disallowedSpecial: new Set() })
      expect(bound).toBeGreaterThanOrEqual(exact)
      if (TIGHT.test(s.kind)) expect(bound).toBe(exact)
    }
  })

  test('the async form (yielding while it encodes) shapes a text as the sync one does', async () => {
    const long = samples.map((s) => s.text).join('\n')
    expect(await textShapeAsync(long)).toEqual(textShape(long))
  })
})

test('families: OpenAI o200k and cl100k models by kind and name; Claude, Gemini; anything else is `any`', () => {
  expect(familyOf('openai', 'gpt-4o-mini')).toBe('o200k')
  expect(familyOf('openai', 'gpt-5.1-codex-max')).toBe('o200k')
  expect(familyOf('openai', 'o3-mini')).toBe('o200k')
  for (const m of ['gpt-4', 'gpt-4-turbo', 'gpt-4-0613', 'gpt-3.5-turbo', 'text-embedding-3-small'])
    expect(familyOf('openai', m)).toBe('cl100k')
  expect(familyOf('openai', 'text-embedding-ada-002')).toBe('cl100k')
  expect(familyOf('openai', 'gpt-4.1-mini')).toBe('o200k')
  expect(familyOf('anthropic', 'gpt-4')).toBe('claude')
  expect(familyOf('openai', 'llama-3.1-70b')).toBe('any')
  expect(familyOf('openai')).toBe('any')
  expect(familyOf('anthropic', 'claude-sonnet-4-5')).toBe('claude')
  expect(familyOf('gemini', 'gemini-2.5-pro')).toBe('gemini')
  expect(familyOf('demo', 'echo')).toBe('any')
  expect(textTokenBound('Hello, world', 'openai', 'gpt-4o')).toBe(3)
  expect(textTokenBound('Hello, world', 'anthropic')).toBeGreaterThanOrEqual(4)
})

describe('a hostile text encodes no more than valid text of its size', () => {
  const SIZE = 128 * 1024
  /** Tokens per byte of the densest valid kind in the corpus (JSON: 0.36), a little over. */
  const VALID = 0.37
  let seed = 7
  const random = (lo: number, hi: number, n: number) => {
    let s = ''
    for (let i = 0; i < n; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      s += String.fromCodePoint(lo + (seed % (hi - lo)))
    }
    return s
  }
  /** Tokens the encoder produced while shaping `text` (its cost), and the bound's checks. */
  const encoded = (text: string) => {
    let tokens = 0
    const shape = textShape(text, (t) => {
      const n = countPiece(t)
      tokens += n
      return n
    })
    return { tokens, shape }
  }
  const hostile: [string, string][] = [
    ['one 256 K-character word', 'a'.repeat(SIZE)],
    ['random CJK without punctuation', random(0x4e00, 0x9fff, SIZE)],
    [
      'random CJK with a comma every 40 characters',
      random(0x4e00, 0x9fff, SIZE).replace(/(.{40})/gu, '$1，'),
    ],
    ['a digit run', random(0x30, 0x3a, SIZE)],
    ['random letters with a space every 30', random(0x61, 0x7b, SIZE).replace(/(.{30})/g, '$1 ')],
    ['base64', Buffer.from(random(0, 256, (SIZE * 3) / 4), 'latin1').toString('base64')],
    ['emoji', random(0x1f300, 0x1f6ff, SIZE / 2)],
  ]
  for (const [name, text] of hostile) {
    test(`${name}: encodes at most what JSON of its size does; the rest is bounded by its bytes`, () => {
      const { tokens, shape } = encoded(text)
      expect(tokens).toBeLessThanOrEqual(VALID * Buffer.byteLength(text))
      // Whatever was not encoded is bounded by its bytes, which no tokenizer exceeds.
      expect(shape.runBytes).toBeGreaterThan(0)
      const head = text.slice(0, 16 * RUN * 20)
      expect(shapeBound(textShape(head), 'o200k')).toBeGreaterThanOrEqual(count(head).tokens)
    })
  }
})
