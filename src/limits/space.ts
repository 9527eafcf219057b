/**
 * @module
 * Whether a UTF-16 unit is whitespace as a regular expression's `\s` has it: the one answer for
 * o200k's pre-tokenizer table (o200k.ts) and the output count's carried space
 * (pipeline/output-allowance.ts).
 */

/**
 * Whether UTF-16 unit `c` is `\s` (ECMAScript's WhiteSpace and LineTerminator): tab to carriage
 * return, space, NBSP, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF. A
 * compare, not a `RegExp.test` an event (test/pipeline/governed-allocations.test.ts checks every
 * unit against `/\s/`).
 */
export function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13)
  if (c < 0xa0) return false
  if (c === 0xa0 || c === 0x1680 || c === 0xfeff || c === 0x3000) return true
  if (c < 0x2000 || c > 0x205f) return false
  return c <= 0x200a || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f
}
