/**
 * @module
 * Id patterns where `*` stands for any run of characters (none included) and every other
 * character for itself: the catalogue's pattern aliases (`anthropic/claude-haiku-4-5-*`). A
 * pattern's weight is its count of other characters: of two patterns an id matches, the one with
 * more wins, and two with as many that some id matches both tie (a config error).
 *
 * @example
 * matchesPieces(patternPieces('a/claude-*'), 'a/claude-3')  // true
 * patternsOverlap('a/*-x', 'a/y-*')            // true: 'a/y-x' matches both
 * literalLength('a/claude-*')                 // 9
 */

/** The pattern's characters other than `*`: the longer of two matching patterns wins. */
export const literalLength = (pattern: string): number => pattern.replaceAll('*', '').length

/** A pattern's pieces between its `*`s (one piece: no `*`), for `matchesPieces`: split once, at load. */
export const patternPieces = (pattern: string): readonly string[] => pattern.split('*')

/** Whether `id` matches, as a whole, the pattern split into `parts` (`patternPieces`). */
export function matchesPieces(parts: readonly string[], id: string): boolean {
  if (parts.length === 1) return parts[0] === id
  const first = parts[0]!
  const last = parts[parts.length - 1]!
  if (id.length < first.length + last.length || !id.startsWith(first) || !id.endsWith(last)) return false
  // Greedy from the left is exact for `*` alone: each middle part at its first place after the last.
  let at = first.length
  const end = id.length - last.length
  for (let n = 1; n < parts.length - 1; n++) {
    const part = parts[n]!
    const found = id.indexOf(part, at)
    if (found === -1 || found + part.length > end) return false
    at = found + part.length
  }
  return true
}

/** Whether some id matches both patterns (each character of one read against the other's). */
export function patternsOverlap(a: string, b: string): boolean {
  const memo = new Map<number, boolean>()
  // i, j: how much of a and b is consumed; a `*` either ends here or takes the other's next character.
  const go = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j
    const known = memo.get(key)
    if (known !== undefined) return known
    let r: boolean
    if (i === a.length && j === b.length) r = true
    else if (a[i] === '*') r = go(i + 1, j) || (j < b.length && go(i, j + 1))
    else if (b[j] === '*') r = go(i, j + 1) || (i < a.length && go(i + 1, j))
    else r = i < a.length && j < b.length && a[i] === b[j] && go(i + 1, j + 1)
    memo.set(key, r)
    return r
  }
  return go(0, 0)
}
