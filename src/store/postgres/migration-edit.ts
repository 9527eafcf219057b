/**
 * @module
 * How a later schema version's function is made from a landed one's text (v14, v21): one exact
 * edit at a time, so a landed version's text is never changed to make a new one (STYLE: a landed
 * migration is frozen; test/store/pg-migrations-frozen.test.ts).
 */

/** `text` with `from` (found exactly once) replaced by `to`: a later version's function edited from a landed one's. */
export function edit(text: string, from: string, to: string): string {
  const at = text.indexOf(from)
  if (at < 0 || text.indexOf(from, at + 1) >= 0)
    throw new Error(`migration: expected one ${JSON.stringify(from)}`)
  return text.slice(0, at) + to + text.slice(at + from.length)
}
