/**
 * @module
 * Text from a request, short enough to quote in a message or a log line: a reply or an audit line
 * never grows with what was sent, and never quotes a key someone sent in it.
 */
import { maskKeys, maskProviderKeys } from './key-shape.ts'

/**
 * `text` with its keys masked (ours to the display prefix, a provider's to its prefix), then cut at
 * `max` characters, an ellipsis marking the cut. Masked first: a key cut in two no longer looks
 * like a key, so a mask after the cut (the logger's, `GatewayError`'s) let its head through.
 *
 * @example clip(`model ${'x'.repeat(80)}sk-sy-AbCdEf0123…`) // '… sk-sy-AbCdEf…', never 'sk-sy-AbCdEf0123'
 */
export function clip(text: string, max = 100): string {
  const shown = maskProviderKeys(maskKeys(text))
  return shown.length <= max ? shown : `${shown.slice(0, max)}…`
}

/**
 * Names a client chose, for a message: the first 10, each clipped to 64 characters and wrapped in
 * `quote`, then how many there were in all.
 *
 * @example shownNames(['a', 'b'], '"') // '"a", "b"'
 */
export function shownNames(names: readonly string[], quote = ''): string {
  const shown = names
    .slice(0, 10)
    .map((n) => `${quote}${clip(n, 64)}${quote}`)
    .join(', ')
  return names.length > 10 ? `${shown}, … (${names.length} in all)` : shown
}

/** `word` after its indefinite article, as a kind is named in a message: "an openai", "a gemini". */
export function aOrAn(word: string): string {
  return `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`
}
