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
import { mainBundle } from './main-bundle.ts'

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

/**
 * A `serve` command line through `sh`, as a terminal runs a job: in a process group of its own,
 * on `PORT` 0 (any free port) unless `env` says otherwise, ended as Ctrl-C ends it (SIGINT to the
 * group; `sh` itself then exits 130). Resolves once it says where it listens.
 */
export async function serveAsPasted(line: string, cwd: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn(['sh', '-c', line], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', PORT: '0', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    detached: true,
  })
  const reader = proc.stdout.getReader()
  let said = ''
  let url: string | undefined
  while (!url) {
    const { value, done } = await reader.read()
    if (done)
      throw new Error(`${line} exited ${await proc.exited}: ${said}${await new Response(proc.stderr).text()}`)
    said += new TextDecoder().decode(value)
    url = /listening on (http:\/\/\S+)/.exec(said)?.[1]
  }
  // Keep reading both pipes so that the gateway never blocks on a full one.
  void (async () => {
    while (!(await reader.read()).done) {}
  })()
  void new Response(proc.stderr).text()
  return {
    url,
    async stop() {
      process.kill(-proc.pid, 'SIGINT')
      return proc.exited
    },
  }
}

/**
 * `switchyard …` as the binary runs it: the binary is `bun build --compile` of src/main.ts, and
 * main-bundle.ts is that bundle, built once a source revision — each spawn skips transpiling the
 * ~300 source modules again (~0.12 s of CPU a spawn).
 */
export async function switchyardBinary(): Promise<(line: string) => string> {
  const bin = `'${process.execPath}' '${await mainBundle()}'`
  return (line) => line.replace(/(^|\s)switchyard(?= )/g, `$1${bin}`)
}
