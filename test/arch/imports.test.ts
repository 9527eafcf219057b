/**
 * The shape of `src/`: every arrow points down. The top folders form a DAG (type imports
 * included), no files import each other in a circle, and the lower steps never reach the HTTP
 * shell (`app/`, `server/`, `console/`). Read from the source text, so a type-only import counts
 * as much as a value import.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { tsFiles } from '../support/ts-files.ts'

const SRC = resolve(import.meta.dir, '../../src')
const SHELL = new Set(['app', 'server', 'console', 'cli', 'main'])
const BELOW_SHELL = ['pipeline', 'surfaces', 'providers', 'limits', 'store']

const SPECIFIER =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g

/** file → the project files it imports (relative specifiers resolved; `.ts` / `index.ts` added). */
export function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files)
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const targets: string[] = []
    for (const m of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const base = resolve(dirname(file), (m[1] ?? m[2])!)
      const hit = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((p) => known.has(p))
      if (hit) targets.push(hit)
    }
    graph.set(file, targets)
  }
  return graph
}

const topOf = (file: string) =>
  relative(SRC, file)
    .split('/')[0]!
    .replace(/\.tsx?$/, '')

/** Strongly connected components with more than one member (Tarjan). */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0
  const idx = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const on = new Set<string>()
  const out: string[][] = []
  const visit = (v: string) => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    on.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!))
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = []
      let w: string
      do {
        w = stack.pop()!
        on.delete(w)
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1) out.push(scc.sort())
    }
  }
  for (const v of graph.keys()) if (!idx.has(v)) visit(v)
  return out
}

const files = tsFiles(SRC)
const fileGraph = importGraph(files)
const folderGraph = new Map<string, string[]>()
for (const [file, targets] of fileGraph) {
  const from = topOf(file)
  const edges = folderGraph.get(from) ?? []
  for (const t of targets) if (topOf(t) !== from && !edges.includes(topOf(t))) edges.push(topOf(t))
  folderGraph.set(from, edges)
}

describe('src/ imports point down', () => {
  test('the top folders form a DAG (type imports included)', () => {
    expect(cycles(folderGraph)).toEqual([])
  })

  test('no files import each other in a circle', () => {
    expect(cycles(fileGraph).map((c) => c.map((f) => relative(SRC, f)))).toEqual([])
  })

  test('the lower steps never import the HTTP shell', () => {
    const offending: string[] = []
    for (const [file, targets] of fileGraph) {
      if (!BELOW_SHELL.includes(topOf(file))) continue
      for (const t of targets)
        if (SHELL.has(topOf(t))) offending.push(`${relative(SRC, file)} → ${relative(SRC, t)}`)
    }
    expect(offending).toEqual([])
  })

  test('the checker sees a circle when there is one', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ])
    expect(cycles(g)).toEqual([['a', 'b', 'c']])
  })
})
