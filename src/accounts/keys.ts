/**
 * @module
 * API key material: generation from a CSPRNG, hashing, display prefixes. Only the SHA-256
 * of a key is ever stored; the secret exists once, in the answer to `keys create`/`rotate`.
 */

import { DISPLAY_CHARS, KEY_PREFIX } from '../util/key-shape.ts'

export { KEY_PREFIX }

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const SECRET_LENGTH = 40

/** The longest name (label) a key may have, in UTF-16 code units: the admin API and the CLI refuse longer. */
export const KEY_NAME_MAX_LENGTH = 200

/**
 * What is wrong with `name` as a key's name (label), or undefined if nothing: at most
 * {@link KEY_NAME_MAX_LENGTH}, and no control characters (C0, DEL, C1), which a label never means
 * and a terminal would act on when the key is listed. The CLI's `--name` and the admin API's
 * `name` both ask it.
 *
 * @example
 * keyNameProblem('ci') // → undefined
 * keyNameProblem('two\nlines') // → 'must not hold control characters (escape, newline, tab, ...)'
 */
export function keyNameProblem(name: string): string | undefined {
  if (name.length > KEY_NAME_MAX_LENGTH)
    return `must be at most ${KEY_NAME_MAX_LENGTH} characters, got ${name.length}`
  if (/\p{Cc}/u.test(name)) return 'must not hold control characters (escape, newline, tab, ...)'
  return undefined
}

/** Uniform base62 string: bytes ≥ 248 are rejected so every character is equally likely. */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2))
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += BASE62[b % 62]
    }
  }
  return out
}

export function generateKey(): string {
  return KEY_PREFIX + randomBase62(SECRET_LENGTH)
}

export function newKeyId(): string {
  return `key_${randomBase62(16)}`
}

/** SHA-256, hex. Bun.SHA256.hash is the one-shot form: ~0.3 µs against ~0.8 µs for a CryptoHasher. */
export function hashKey(key: string): string {
  return Bun.SHA256.hash(key, 'hex')
}

export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + DISPLAY_CHARS)
}

const KEY_SHAPE = /^sk-sy-[0-9A-Za-z]{32,128}$/

/** Is this string shaped like a Switchyard key? (Cheap check before hashing.) */
export function looksLikeKey(s: string): boolean {
  return KEY_SHAPE.test(s)
}
