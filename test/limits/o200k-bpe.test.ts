/**
 * Our o200k byte-pair counter (src/limits/o200k-bpe.ts) against gpt-tokenizer 3.4.0's, the one it
 * replaces (a devDependency now): the committed table is what scripts/o200k-table.ts writes from
 * gpt-tokenizer's ranks, the pre-tokenizer is its pattern, and the counts are its counts (special
 * tokens' text as text) on the token corpus, the recorded requests and responses, random Unicode
 * of every kind that splits or merges differently, and a seeded fuzz. Zero mismatches.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import bpe from 'gpt-tokenizer/esm/bpeRanks/o200k_base'
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/esm/encodingParams/constants'
import { tableFile } from '../../scripts/o200k-table.ts'
import { bpeCount, PIECE, readTable, TABLE_HASH } from '../../src/limits/o200k-bpe.ts'
import { mulberry32 as random } from '../support/malformed-bodies.ts'
import { reportedSamples, syntheticSamples } from '../support/token-corpus.ts'

const theirs = (text: string) => countTokens(text, { disallowedSpecial: new Set() })

/** The texts whose counts differ (at most 5 shown), so a failure names them. */
function mismatches(texts: readonly string[]): string[] {
  const out: string[] = []
  for (const t of texts) {
    const ours = bpeCount(t)
    const want = theirs(t)
    if (ours !== want && out.push(`${JSON.stringify(t.slice(0, 80))}: ${ours}, gpt-tokenizer ${want}`) >= 5)
      break
  }
  return out
}

test('the committed table is what scripts/o200k-table.ts writes from gpt-tokenizer’s ranks', () => {
  const committed = readFileSync(join(import.meta.dir, '../../src/limits/o200k.bin'))
  const written = tableFile(bpe)
  expect(committed.length).toBe(written.length)
  expect(Buffer.compare(committed, written)).toBe(0)
  expect(Bun.hash(written)).toBe(TABLE_HASH)
})

describe('a file that is not the table is refused by name, not read (a temp copy of it)', () => {
  const table = readFileSync(join(import.meta.dir, '../../src/limits/o200k.bin'))
  const dir = mkdtempSync(join(tmpdir(), 'o200k-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const refused = (name: string, bytes: Uint8Array | null, why: RegExp) => {
    const path = join(dir, name)
    if (bytes) writeFileSync(path, bytes)
    let error: unknown
    try {
      readTable(path)
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).name).toBe('Error')
    expect((error as Error).message).toStartWith(`${path}: not the o200k table (`)
    expect((error as Error).message).toMatch(why)
  }

  test('the copy itself is read', () => {
    writeFileSync(join(dir, 'same.bin'), table)
    expect(readTable(join(dir, 'same.bin')).slots.length).toBe(2 ** 19)
  })
  test('truncated', () => {
    refused('short.bin', table.subarray(0, table.length - 1), /4294829 bytes, its header says 4294830/)
    refused('half.bin', table.subarray(0, 1_000), /shorter than its header says/)
    refused('header.bin', table.subarray(0, 5), /5 bytes, shorter than its header\)/)
  })
  test('one byte changed', () => {
    for (const at of [20, 3_000_000, table.length - 1]) {
      const changed = Buffer.from(table)
      changed[at]! ^= 1
      refused(`changed-${at}.bin`, changed, /hash [0-9a-f]+, not b41013555e1a86b2/)
    }
  })
  test('trailing bytes', () => {
    refused('long.bin', Buffer.concat([table, Buffer.from([0])]), /4294831 bytes, its header says 4294830/)
  })
  test('missing', () => refused('missing.bin', null, /ENOENT/))
})

test('the pre-tokenizer is gpt-tokenizer’s (tiktoken’s o200k pattern), sticky', () => {
  expect(PIECE.source).toBe(O200K_TOKEN_SPLIT_REGEX.source)
  expect(O200K_TOKEN_SPLIT_REGEX.flags).toBe('gu')
  expect(PIECE.flags).toBe('uy')
})

test('every token alone counts 1, as its own text (the table holds each rank’s bytes)', () => {
  let checked = 0
  const wrong: string[] = []
  for (const t of bpe) {
    if (typeof t !== 'string') continue
    // A token is one piece only where the pre-tokenizer does not split it.
    const pieces = t.match(O200K_TOKEN_SPLIT_REGEX)
    if (pieces?.length !== 1 || pieces[0] !== t) continue
    checked++
    if (bpeCount(t) !== 1 && wrong.push(t) >= 5) break
  }
  expect(wrong).toEqual([])
  expect(checked).toBeGreaterThan(150_000)
})

test('a token stored as bytes that are valid UTF-8 (the BOM’s) counts 1 alone, and U+FEFF text counts as tiktoken’s', () => {
  // gpt-tokenizer 3.4.0 keeps these ranks as byte arrays and decodes them without the BOM, so it
  // never finds them and counts such text higher; tiktoken (js-tiktoken, checked by the review
  // of stop 58) counts what we count. Not a short count against OpenAI: a higher one there.
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  const asText: string[] = []
  for (const t of bpe) {
    if (typeof t === 'string') continue
    try {
      asText.push(utf8.decode(Uint8Array.from(t as ArrayLike<number>)))
    } catch {
      // not UTF-8 alone: a part of a character, counted through its merges
    }
  }
  const alone = asText.filter((t) => t.match(O200K_TOKEN_SPLIT_REGEX)?.length === 1)
  expect(alone.length).toBeGreaterThan(0)
  expect(alone.filter((t) => bpeCount(t) !== 1)).toEqual([])
  expect(['\ufeff', '\ufeffusing', '\ufeff\ufeff', '\ufeffusing System;'].map(bpeCount)).toEqual([1, 1, 1, 3])
})

test('a lone surrogate is U+FFFD’s bytes: each token that holds U+FFFD, with lone surrogates, counts as gpt-tokenizer’s merge', () => {
  // gpt-tokenizer looks such a piece up by its text (no token) and merges; ours looks its bytes up.
  const texts = bpe.filter((t): t is string => typeof t === 'string' && t.includes('\ufffd'))
  expect(texts.length).toBeGreaterThan(10)
  const lone = texts.flatMap((t) => [t.replaceAll('\ufffd', '\ud83d'), t.replaceAll('\ufffd', '\udc00')])
  expect(mismatches(lone)).toEqual([])
})

describe('the same counts as gpt-tokenizer', () => {
  test('the token corpus: reported bodies, synthetic texts and their bodies', () => {
    const texts = [
      ...reportedSamples().map((s) => s.body),
      ...syntheticSamples().flatMap((s) => [s.text, s.body]),
      ...syntheticSamples(600).map((s) => s.text),
    ]
    expect(mismatches(texts)).toEqual([])
  })

  test('the recorded requests and responses (test/fixtures/reference), whole and line by line', () => {
    const dir = join(import.meta.dir, '../fixtures/reference')
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) =>
      /\.(json|txt|md)$/.test(f),
    )
    expect(files.length).toBeGreaterThan(15)
    const texts: string[] = []
    const strings = (v: unknown): void => {
      if (typeof v === 'string') texts.push(v)
      else if (v && typeof v === 'object') for (const x of Object.values(v)) strings(x)
    }
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8')
      texts.push(text, ...text.split('\n'))
      for (const line of text.split('\n'))
        try {
          strings(JSON.parse(line.replace(/^data: /, '')))
        } catch {}
    }
    expect(texts.length).toBeGreaterThan(1_000)
    expect(mismatches(texts)).toEqual([])
  })

  const next = random(58)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!
  const from = (lo: number, hi: number) => String.fromCodePoint(lo + Math.floor(next() * (hi - lo + 1)))
  /** Characters by kind: each splits or merges its own way. */
  const KINDS: (() => string)[] = [
    () => from(0x20, 0x7e), // ASCII
    () => from(0x41, 0x5a), // capitals (the pre-tokenizer's case rules)
    () => from(0x30, 0x39), // digits (runs of three)
    () => pick([' ', '  ', '\t', '\n', '\r\n', '\r', '\u00a0', '\u2003', '\u3000', '\v', '\f']),
    () => pick(["'s", "'S", "'T", "'LL", "'Re", "'vE", "'d", "'M", "'x", "'"]), // contractions
    () => from(0x4e00, 0x9fff), // CJK
    () => from(0x3040, 0x30ff), // kana
    () => from(0xac00, 0xd7a3), // Hangul
    () => from(0x0600, 0x06ff), // Arabic
    () => from(0x0900, 0x097f), // Devanagari
    () => from(0x0400, 0x04ff), // Cyrillic
    () => from(0x0300, 0x036f), // combining marks
    () => pick(['👨‍👩‍👧‍👦', '👩🏽‍💻', '🏳️‍🌈', '\u200d', '\ufe0f', '🇫🇷']), // emoji, ZWJ, flags
    () => from(0x1f300, 0x1faff), // emoji
    () => from(0x10000, 0x10ffff), // every astral plane
    () => from(0x80, 0xffff).replace(/[\ud800-\udfff]/, '\ufffd'), // the BMP
    () => String.fromCharCode(0xd800 + Math.floor(next() * 0x800)), // a lone surrogate
    () => pick(['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|fim_prefix|>', '<|endofprompt|>']),
    () => pick(['{"a":', '},', '[1,2]', '</div>', '=>', '//', '/*', '...', '—', '€', '\\n']),
  ]
  /** A text of `n` characters, each of kind `kind()`. */
  const text = (n: number, kind: () => () => string) => Array.from({ length: n }, () => kind()()).join('')

  test('random Unicode by kind: runs of one kind, and kinds mixed', () => {
    const texts: string[] = []
    for (const k of KINDS) for (const n of [1, 2, 3, 5, 8, 40, 300]) texts.push(text(n, () => k))
    for (let i = 0; i < 500; i++) texts.push(text(1 + Math.floor(next() * 60), () => pick(KINDS)))
    // Runs without a place to split, whole (long pieces merge most).
    texts.push('a'.repeat(2_000), '7'.repeat(1_000), ' '.repeat(1_000), '\n'.repeat(500), 'ab'.repeat(700))
    texts.push(
      text(1_500, () => KINDS[5]!),
      text(800, () => KINDS[13]!),
      Buffer.from(text(900, () => KINDS[15]!)).toString('base64'),
    )
    expect(mismatches(texts)).toEqual([])
  })

  test('a seeded fuzz of 4,000 texts', () => {
    const texts: string[] = []
    for (let i = 0; i < 4_000; i++) {
      // Mostly one or two kinds at a time, as real text is, sometimes all at once.
      const kinds = next() < 0.2 ? KINDS : [pick(KINDS), pick(KINDS), KINDS[0]!, KINDS[3]!]
      texts.push(text(1 + Math.floor(next() * 120), () => pick(kinds)))
    }
    expect(mismatches(texts)).toEqual([])
  })
})
