/**
 * @module
 * o200k's byte-pair encoding, counting only (the gateway never needs the token ids): tiktoken's
 * algorithm as gpt-tokenizer 3.4.0 runs it, with its ranks in typed arrays. gpt-tokenizer's own
 * table (199,998 JavaScript strings in a Map) took 0.8–1.7 s to load and made every full garbage
 * collection 16–58 ms slower for as long as the process lived; this one is one file
 * (`o200k.bin`, 4.3 MB, written by scripts/o200k-table.ts) read and checked at `serve` start (or
 * at the first count), with nothing per token on the heap (docs/benchmarks/input-count.md).
 *
 * - The text is split with o200k's pre-tokenizer (tiktoken's pattern, as gpt-tokenizer writes it).
 * - A piece whose UTF-8 bytes are a token counts 1; any other is merged pair by pair, the pair of
 *   lowest rank first (the leftmost of equals), until no pair is a token: it counts its parts.
 *   A piece of more than `LONG` bytes finds that pair in a heap (a run without a place to split:
 *   random CJK counted twice as fast), a short one by a scan (cheaper there).
 * - A lone surrogate is the bytes of U+FFFD, as TextEncoder writes it. gpt-tokenizer then merges a
 *   piece it would have looked up whole (it looks a piece up by its text); on o200k's table that
 *   gives the same count (test/limits/o200k-bpe.test.ts checks each token that holds U+FFFD).
 * - No special tokens: their text is text.
 * - Text with U+FEFF counts as tiktoken counts it, lower than gpt-tokenizer 3.4.0 (which keeps the
 *   BOM's nine ranks as bytes, decodes them without the BOM and never finds them): the test pins it.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import tableFile from './o200k.bin' with { type: 'file' }

/**
 * Where the table is: from source, the file's own path; in the executable a `/$bunfs/` one; in a
 * `bun build` bundle a path relative to the bundle (`./o200k-<hash>.bin`), not to the working
 * directory.
 */
const tablePath = resolve(import.meta.dir, tableFile)

/**
 * o200k's pre-tokenizer (tiktoken's `o200k_base` pattern), sticky: every character begins a piece
 * (its branches take letters and marks, numbers, whitespace, and everything else), so the pieces
 * are contiguous and `test` finds each at the last one's end, without the match array `exec`
 * makes (a third of a chat message's count).
 */
const CONTRACTION = "(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?"
export const PIECE = new RegExp(
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+${CONTRACTION}` +
    String.raw`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*${CONTRACTION}` +
    String.raw`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  'uy',
)

/**
 * The table, `o200k.bin` (written by scripts/o200k-table.ts; numbers in the machine's byte order,
 * little-endian on every target Bun builds for):
 * - `O2K2`, the number of ranks, the number of slots (a power of two; u32 each);
 * - where each rank's bytes start (u32 × ranks, and one more: where the last ends);
 * - the slots: open addressing (linear probing) from `hashOf` a token's bytes to its rank, -1
 *   where empty (i32 × slots; at most 40% full, so a lookup probes 1.3 slots on average);
 * - every rank's bytes, in rank order.
 * Everything is laid out ahead, so loading is reading the file: no per-token work.
 */
export const MAGIC = 0x4f324b32
/** Every token's bytes, in rank order. */
let tokenBytes: Uint8Array = new Uint8Array(0)
/** Where each rank's bytes start in `tokenBytes` (and, one further, end). */
let starts: Uint32Array = new Uint32Array(0)
let slots: Int32Array = new Int32Array(0)
let mask = 0

/**
 * `Bun.hash` (wyhash) of the whole of `o200k.bin`, as scripts/o200k-table.ts prints it: a table
 * changed by one byte would count wrong without a word, so a file of another hash is refused.
 */
export const TABLE_HASH = 0xb41013555e1a86b2n

/**
 * Reads the table, once: `buildDeps` calls it at start (app/build.ts), so a bundle without it
 * fails there, not on a request.
 */
export function loadTable(): void {
  if (slots.length > 0) return
  const table = readTable(tablePath)
  tokenBytes = table.tokenBytes
  starts = table.starts
  mask = table.slots.length - 1
  slots = table.slots
}

/**
 * The table in the file at `path` (synchronous: a read of the file, its hash, three views of it).
 * A file that is not the table (missing, cut short, longer, changed) throws
 * `<path>: not the o200k table (<why>)`.
 */
export function readTable(path: string): { tokenBytes: Uint8Array; starts: Uint32Array; slots: Int32Array } {
  const refuse = (why: string) => new Error(`${path}: not the o200k table (${why})`)
  let read: Buffer
  try {
    read = readFileSync(path)
  } catch (err) {
    throw refuse((err as NodeJS.ErrnoException).code ?? (err as Error).message)
  }
  if (read.length < 12) throw refuse(`${read.length} bytes, shorter than its header`)
  // A copy only if the read buffer is not 4-byte aligned (a view needs it to be).
  const file = read.byteOffset % 4 === 0 ? read : Uint8Array.from(read)
  const [magic, ranks = 0, size = 0] = new Uint32Array(file.buffer, file.byteOffset, 3)
  if (magic !== MAGIC || !ranks || !size) throw refuse('no O2K2 header')
  const slotsAt = 12 + 4 * (ranks + 1)
  const bytesAt = slotsAt + 4 * size
  if (file.length < bytesAt) throw refuse(`${file.length} bytes, shorter than its header says`)
  const starts = new Uint32Array(file.buffer, file.byteOffset + 12, ranks + 1)
  const length = bytesAt + starts[ranks]!
  if (file.length !== length) throw refuse(`${file.length} bytes, its header says ${length}`)
  const hash = Bun.hash(file)
  if (hash !== TABLE_HASH) throw refuse(`hash ${hash.toString(16)}, not ${TABLE_HASH.toString(16)}`)
  return {
    tokenBytes: new Uint8Array(file.buffer, file.byteOffset + bytesAt, starts[ranks]),
    starts,
    slots: new Int32Array(file.buffer, file.byteOffset + slotsAt, size),
  }
}

/** FNV-1a of `b[from..to)`, its bits mixed (murmur3's finalizer) so the low ones index the table. */
export function hashOf(b: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193)
  return mixed(h)
}

function mixed(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  return h
}

/** The rank of the bytes `b[from..to)` (of hash `hash`), or -1 if they are no token. */
function rankOf(b: Uint8Array, from: number, to: number, hash: number): number {
  const n = to - from
  for (let s = hash & mask; ; s = (s + 1) & mask) {
    const r = slots[s]!
    if (r < 0) return -1
    const at = starts[r]!
    if (starts[r + 1]! - at !== n) continue
    let i = 0
    while (i < n && tokenBytes[at + i] === b[from + i]) i++
    if (i === n) return r
  }
}

/** o200k tokens of `text`, whole. */
export function bpeCount(text: string): number {
  loadTable()
  let tokens = 0
  PIECE.lastIndex = 0
  for (let from = 0; from < text.length; from = PIECE.lastIndex) {
    if (!PIECE.test(text)) throw new Error(`o200k: no piece at ${from}`)
    const n = utf8(text, from, PIECE.lastIndex)
    tokens += rankOf(piece, 0, n, hash) >= 0 ? 1 : merged(n)
  }
  return tokens
}

/** A piece's UTF-8 bytes (grown for a long piece), and their `hash`. */
let piece = new Uint8Array(1024)
let hash = 0

/** Writes `text[from..to)` as UTF-8 into `piece` (a lone surrogate as U+FFFD); its length. */
function utf8(text: string, from: number, to: number): number {
  if ((to - from) * 3 > piece.length) piece = new Uint8Array((to - from) * 3)
  const b = piece
  let n = 0
  let h = 0x811c9dc5
  for (let i = from; i < to; i++) {
    let c = text.charCodeAt(i)
    if (c < 0x80) {
      b[n++] = c
      h = Math.imul(h ^ c, 0x01000193)
      continue
    }
    if (c < 0x800) {
      b[n++] = 0xc0 | (c >> 6)
      b[n++] = 0x80 | (c & 0x3f)
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const d = c <= 0xdbff && i + 1 < to ? text.charCodeAt(i + 1) : 0
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00)
        i++
        b[n++] = 0xf0 | (c >> 18)
        b[n++] = 0x80 | ((c >> 12) & 0x3f)
        b[n++] = 0x80 | ((c >> 6) & 0x3f)
        b[n++] = 0x80 | (c & 0x3f)
      } else {
        b[n++] = 0xef
        b[n++] = 0xbf
        b[n++] = 0xbd
      }
    } else {
      b[n++] = 0xe0 | (c >> 12)
      b[n++] = 0x80 | ((c >> 6) & 0x3f)
      b[n++] = 0x80 | (c & 0x3f)
    }
    for (let j = n - (c < 0x800 ? 2 : c < 0x10000 ? 3 : 4); j < n; j++) h = Math.imul(h ^ b[j]!, 0x01000193)
  }
  hash = mixed(h)
  return n
}

const NONE = 0x7fffffff
/** Pieces longer than this many bytes merge through a heap (`mergedLong`). */
const LONG = 48
/** Where each part of a short piece starts (one more: its end), and the rank of each part with the next. */
const parts = new Int32Array(LONG + 1)
const pairs = new Int32Array(LONG)

/** The rank of the bytes from part `i`'s start to part `i + 2`'s (NONE past the end or if no token). */
function pairRank(i: number, count: number): number {
  if (i + 2 > count) return NONE
  const from = parts[i]!
  const to = parts[i + 2]!
  const r = rankOf(piece, from, to, hashOf(piece, from, to))
  return r < 0 ? NONE : r
}

/** The tokens of the first `n` bytes of `piece` by merging (tiktoken's `byte_pair_merge`). */
function merged(n: number): number {
  if (n === 1) return 1
  if (n > LONG) return mergedLong(n)
  for (let i = 0; i <= n; i++) parts[i] = i
  let count = n
  for (let i = 0; i < count - 1; i++) pairs[i] = pairRank(i, count)
  while (count > 1) {
    let best = NONE
    let at = -1
    for (let i = 0; i < count - 1; i++) {
      const r = pairs[i]!
      if (r < best) {
        best = r
        at = i
      }
    }
    if (at < 0) break
    // Part `at + 1` joins part `at`.
    parts.copyWithin(at + 1, at + 2, count + 1)
    pairs.copyWithin(at + 1, at + 2, count - 1)
    count--
    if (at < count - 1) pairs[at] = pairRank(at, count)
    if (at > 0) pairs[at - 1] = pairRank(at - 1, count)
  }
  return count
}

/** Per byte of a long piece: the next part's start after the part starting there, the previous part's, the pair's rank. */
let next = new Int32Array(0)
let prev = new Int32Array(0)
let rankAt = new Int32Array(0)
/** A min-heap of rank × 2^32 + start: the lowest rank first, the leftmost of equals. */
let heap = new Float64Array(0)
const SHIFT = 2 ** 32

function rangeRank(from: number, to: number): number {
  const r = rankOf(piece, from, to, hashOf(piece, from, to))
  return r < 0 ? NONE : r
}

/**
 * `merged` for a long piece, the same merges in the same order: the pair of lowest rank, the
 * leftmost of equals, found in a heap (a pair's rank changes only when a neighbour merges; an entry
 * whose rank is no longer its pair's is dropped when it surfaces).
 */
function mergedLong(n: number): number {
  if (next.length <= n) {
    next = new Int32Array(n + 1)
    prev = new Int32Array(n + 1)
    rankAt = new Int32Array(n + 1)
    // At most n - 1 pairs at first, and two more a merge.
    heap = new Float64Array(3 * n)
  }
  let size = 0
  const push = (key: number) => {
    let i = size++
    while (i > 0) {
      const up = (i - 1) >> 1
      if (heap[up]! <= key) break
      heap[i] = heap[up]!
      i = up
    }
    heap[i] = key
  }
  for (let i = 0; i < n; i++) {
    next[i] = i + 1
    prev[i] = i - 1
    const r = i + 2 <= n ? rangeRank(i, i + 2) : NONE
    rankAt[i] = r
    if (r !== NONE) push(r * SHIFT + i)
  }
  let count = n
  while (size > 0) {
    const top = heap[0]!
    // Pop.
    const last = heap[--size]!
    let i = 0
    for (;;) {
      let c = 2 * i + 1
      if (c >= size) break
      if (c + 1 < size && heap[c + 1]! < heap[c]!) c++
      if (heap[c]! >= last) break
      heap[i] = heap[c]!
      i = c
    }
    heap[i] = last
    const start = top % SHIFT
    const rank = (top - start) / SHIFT
    if (rankAt[start] !== rank) continue // stale, or the part is gone (its rank NONE)
    // The part after `start` joins it.
    const gone = next[start]!
    const after = next[gone]!
    next[start] = after
    if (after < n) prev[after] = start
    rankAt[gone] = NONE
    count--
    const r = after < n ? rangeRank(start, next[after]!) : NONE
    rankAt[start] = r
    if (r !== NONE) push(r * SHIFT + start)
    const before = prev[start]!
    if (before >= 0) {
      const b = rangeRank(before, after)
      rankAt[before] = b
      if (b !== NONE) push(b * SHIFT + before)
    }
  }
  return count
}
