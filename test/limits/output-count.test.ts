/**
 * The output count (src/limits/output-count.ts) is the answering model's family: GPT-4-era OpenAI
 * models in cl100k, GPT-4o-era in o200k, Claude and Gemini by their profiles. Summed chunk by
 * chunk as a stream arrives, the cl100k count is never under gpt-tokenizer's `cl100k_base` count
 * of the whole text on the corpus' synthetic texts (Devanagari, CJK, Hangul, Cyrillic, emoji …) —
 * but two, `UNDER`: a run without a place to split is bounded by its bytes only from `RUN` (48)
 * characters, so in chunks shorter than that it is encoded, and o200k merges these runs far more
 * than cl100k does (2026-12-01: "abab…" in chunks of 20 / 40 / 100 characters 0.75 / 0.60 / 0.55 of
 * cl100k; random CJK in chunks of 40 or 100, 0.99). Left open: docs/tokens-and-money.md.
 */
import { expect, test } from 'bun:test'
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base'
import { outputFamily, outputTokenCount } from '../../src/limits/output-count.ts'
import { syntheticSamples } from '../support/token-corpus.ts'

/** Texts whose chunk sum is under cl100k (see above): measured, not asserted. */
const UNDER = new Set(['repeat-ab', 'random-cjk'])

test('the family of the answering model: the input bound’s, o200k for a compatible server’s unknown model', () => {
  expect(outputFamily('openai', 'gpt-4')).toBe('cl100k')
  expect(outputFamily('openai', 'gpt-3.5-turbo')).toBe('cl100k')
  expect(outputFamily('openai', 'gpt-4o')).toBe('o200k')
  expect(outputFamily('anthropic', 'claude-sonnet-4-5')).toBe('claude')
  expect(outputFamily('gemini', 'gemini-2.5-pro')).toBe('gemini')
  expect(outputFamily('openai', 'llama-3.1-70b')).toBe('o200k')
  expect(outputFamily('demo', 'echo')).toBe('demo')
})

test('cl100k counted chunk by chunk (1 to 100 characters) is never under the whole text’s cl100k count', () => {
  for (const s of syntheticSamples(2048)) {
    if (UNDER.has(s.kind)) continue
    const whole = cl100k(s.text)
    for (const size of [1, 3, 8, 20, 40, 100]) {
      let sum = 0
      for (let i = 0; i < s.text.length; ) {
        // Never split a surrogate pair: a stream's deltas are whole characters.
        let end = Math.min(s.text.length, i + size)
        if (end < s.text.length && /[\ud800-\udbff]/.test(s.text[end - 1]!)) end++
        sum += outputTokenCount(s.text.slice(i, end), 'cl100k')
        i = end
      }
      expect(sum, `${s.kind} in chunks of ${size}`).toBeGreaterThanOrEqual(whole)
    }
    // Whole, it is far over o200k on a script cl100k splits finer.
    if (s.kind === 'hindi')
      expect(outputTokenCount(s.text, 'cl100k')).toBeGreaterThan(2 * outputTokenCount(s.text, 'o200k'))
  }
})
