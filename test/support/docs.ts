/**
 * @module
 * The project's documents as the tests that check them read them: the README (what a newcomer
 * needs), BENCHMARKS.md, and the reference pages under `docs/` (one per concern, issue 47). A test
 * that pins a document's text names the page it reads, so moving a section is one edit here and
 * there, never a silent skip.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO } from './cli.ts'

/** Every markdown document, as a path from the repository's root: README, BENCHMARKS, docs/**. */
export function docPaths(): string[] {
  const pages = readdirSync(join(REPO, 'docs'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`)
    .sort()
  return ['README.md', 'BENCHMARKS.md', ...pages]
}

/** One document's text, by its path from the repository's root (`docs/configuration.md`). */
export function doc(path: string): string {
  return readFileSync(join(REPO, path), 'utf8')
}

/**
 * The first fenced block of `lang` after the first occurrence of `anchor` in the first of `paths`
 * that has both (by default every document: README, then BENCHMARKS, then docs/ by name), with the
 * path it was found in.
 */
export function blockAfter(
  anchor: string,
  lang: string,
  paths: string[] = docPaths(),
): { path: string; text: string } {
  for (const path of paths) {
    const text = doc(path)
    const at = text.indexOf(anchor)
    if (at < 0) continue
    const m = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(text.slice(at))
    if (m) return { path, text: m[1]! }
  }
  throw new Error(`no \`\`\`${lang} block after "${anchor}" in any document`)
}

/** A shell block's commands: continuation lines joined, comments cut, one command a line. */
export function commandLines(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.replace(/(^|\s+)#.*$/, '').trim())
    .filter(Boolean)
}
