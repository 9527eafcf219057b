/**
 * `bun scripts/o200k-table.ts`: writes src/limits/o200k.bin, the o200k table the gateway counts
 * with (its layout: src/limits/o200k-bpe.ts), from gpt-tokenizer's own ranks (a devDependency:
 * the product does not load it). test/limits/o200k-bpe.test.ts checks the committed file is
 * what this writes, and that its `Bun.hash` is `TABLE_HASH` (o200k-bpe.ts refuses a file of another
 * hash): after a change here, put the hash this prints there.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import bpe from 'gpt-tokenizer/esm/bpeRanks/o200k_base'
import { hashOf, MAGIC } from '../src/limits/o200k-bpe.ts'

/** The file for a list of ranks (a string is its UTF-8 bytes, as gpt-tokenizer reads it). */
export function tableFile(ranks: readonly (string | number[])[]): Uint8Array {
  const utf8 = new TextEncoder()
  const tokens = ranks.map((t) => (typeof t === 'string' ? utf8.encode(t) : Uint8Array.from(t)))
  let size = 1
  while (size < tokens.length * 2.5) size *= 2
  const starts = new Uint32Array(tokens.length + 1)
  tokens.forEach((t, rank) => {
    starts[rank + 1] = starts[rank]! + t.length
  })
  const bytes = new Uint8Array(starts[tokens.length]!)
  const slots = new Int32Array(size).fill(-1)
  tokens.forEach((t, rank) => {
    bytes.set(t, starts[rank])
    let s = hashOf(t, 0, t.length) & (size - 1)
    while (slots[s] !== -1) s = (s + 1) & (size - 1)
    slots[s] = rank
  })
  const header = new Uint32Array([MAGIC, tokens.length, size])
  return Buffer.concat([header, starts, slots].map((a) => new Uint8Array(a.buffer)).concat(bytes))
}

if (import.meta.main) {
  const out = join(import.meta.dir, '../src/limits/o200k.bin')
  const file = tableFile(bpe)
  writeFileSync(out, file)
  console.log(
    `wrote ${out}: ${bpe.length} ranks, ${file.length} bytes, TABLE_HASH = 0x${Bun.hash(file).toString(16)}n`,
  )
}
