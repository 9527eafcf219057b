/**
 * @module
 * A config file's text to a document: `${…}` placeholders quoted where YAML would refuse them,
 * a syntax error placed at its line, and keys written twice in one mapping found (the parser
 * keeps the last silently).
 *
 * @example
 * readYaml('a: 1\na: 2\n') // { doc: { a: 2 }, problems: [{ path: '/a', message: "duplicate key 'a' ..." }] }
 * readYaml('a: [1\n')     // { doc: undefined, problems: [{ path: '/', message: 'YAML syntax error near line 1: ...' }] }
 */
import { duplicateKeys } from './duplicate-keys.ts'
import type { Problem } from './intact.ts'

/** `doc` is undefined when the text is not YAML (`problems` then holds why, and where). */
export function readYaml(text: string): { doc: unknown; problems: Problem[] } {
  const quoted = quotePlaceholders(text)
  try {
    const doc = Bun.YAML.parse(quoted)
    return { doc, problems: duplicateKeys(quoted, doc) }
  } catch (err) {
    const why = (err as Error).message.replace(/^YAML Parse error: /, '')
    return {
      doc: undefined,
      problems: [{ path: '/', message: `YAML syntax error${near(errorLine(quoted))}: ${why}` }],
    }
  }
}

/**
 * `{ token: ${X} }` is not valid YAML (a plain scalar in a flow mapping cannot hold `{}`), yet it
 * is the natural way to write it. A placeholder (or its escape, `$${X}`) standing alone as a value
 * is single-quoted before parsing — single, so a backslash in a default stays a backslash;
 * interpolation then happens on the parsed strings, so no value can inject YAML.
 */
export function quotePlaceholders(text: string): string {
  return text.replace(/([:\-[,{]\s*)(\$?\$\{[^}\n"']*\})(?=[ \t]*(?:[,}\]#\r\n]|$))/gm, "$1'$2'")
}

/** Past this many lines a parse per line costs more than the line is worth. */
const MAX_LINES_SEARCHED = 5000

const near = (line: number | null) => (line === null ? '' : ` near line ${line}`)

/**
 * Bun's error carries no position. The line after the longest run of whole lines that still
 * parses is where the text stops being YAML (an unclosed quote or bracket: where it opens). Runs
 * only on a file that failed, one parse per line at most.
 */
function errorLine(text: string): number | null {
  const lines = text.split('\n')
  if (lines.length > MAX_LINES_SEARCHED) return null
  for (let n = lines.length - 1; n > 0; n--) {
    try {
      Bun.YAML.parse(lines.slice(0, n).join('\n'))
      return n + 1
    } catch {}
  }
  return 1
}
