/**
 * @module
 * The CLI entry that tests spawn as a real process: `src/main.ts` bundled once (`bun build
 * --target bun`) into a directory under the temp dir, named by a hash of everything the bundle
 * is made of, and reused by every file and every `--parallel` worker of the run (and the next
 * run, while the sources are unchanged). A `bun src/main.ts` spawn transpiles and links ~300
 * modules before it serves: ~0.42 s of CPU to the bundle's ~0.30 s (measured 2026-11-29, `serve`
 * to its first line), and the suite spawns a few hundred gateways and CLI commands.
 *
 * The bundle is what `bun run build` compiles into the executable (the same bundler on the same
 * entries: src/main.ts and the usage writer's thread), so a spawned gateway runs the code the binary ships: its console pages come from the
 * bundle's prebuilt files (`HTMLBundle.files`, src/console/static.ts) as the binary's do, where an
 * in-process gateway (support/gateway.ts) builds them from source. Tests whose subject is the
 * checkout's own command line (`bun src/main.ts …` as the documents show it) still run the source.
 *
 * Invariant: the hash covers every input of the bundle (src/, package.json — the version and the
 * dependencies —, the lockfile, the starter config `init` embeds, tsconfig.json, this file) and Bun's version,
 * so an edited source is never served from an old bundle.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'

const REPO = new URL('../..', import.meta.url).pathname
/** The usage flush's writer thread's module: a second entry point. */
const THREAD = 'src/store/sqlite/usage-thread.ts'
/** This file too: its entries and options make the bundle as much as the sources do. */
const INPUTS = [
  'package.json',
  'package-lock.json',
  'switchyard.example.yaml',
  'tsconfig.json',
  'test/support/main-bundle.ts',
]
/** A bundle of this checkout unused this long (ms) is another revision's: removed. */
const STALE_MS = 30 * 60_000

function sourcesHash(): string {
  const files: string[] = []
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else files.push(p)
    }
  }
  walk(join(REPO, 'src'))
  files.push(...INPUTS.map((f) => join(REPO, f)).filter((f) => existsSync(f)))
  files.sort()
  let h = Bun.hash(Bun.version)
  for (const f of files) h = Bun.hash(readFileSync(f), Bun.hash(relative(REPO, f), h))
  return h.toString(36)
}

let entry: Promise<string> | undefined

/** The bundled entry's path (built on first call in this process if no run has built it yet). */
export function mainBundle(): Promise<string> {
  entry ??= build()
  return entry
}

async function build(): Promise<string> {
  // One name per checkout, so a cleanup here never touches another checkout's bundles.
  const prefix = `switchyard-main-${Bun.hash(REPO).toString(36)}-`
  const dir = join(tmpdir(), `${prefix}${sourcesHash()}`)
  const main = join(dir, 'main.js')
  if (!existsSync(main)) {
    // Built aside and renamed into place: a worker never sees half a bundle; the loser of a race
    // between workers throws its copy away.
    const aside = `${dir}.${process.pid}.${Date.now()}`
    // The usage writer's thread is an entry of its own, as in `bun run build` (scripts/build.ts):
    // src/store/sqlite/usage-writer.ts finds it at store/sqlite/usage-thread.js beside main.js.
    const out = await Bun.build({
      entrypoints: [join(REPO, 'src/main.ts'), join(REPO, THREAD)],
      root: join(REPO, 'src'),
      target: 'bun',
      outdir: aside,
      // As scripts/build.ts: a command's modules are chunks read when it runs.
      splitting: true,
    })
    if (!out.success) throw new AggregateError(out.logs, 'bundling src/main.ts failed')
    try {
      renameSync(aside, dir)
    } catch {
      rmSync(aside, { recursive: true, force: true })
    }
  }
  const now = new Date()
  utimesSync(dir, now, now)
  for (const name of readdirSync(tmpdir())) {
    const p = join(tmpdir(), name)
    if (!name.startsWith(prefix) || p === dir) continue
    try {
      if (Date.now() - statSync(p).mtimeMs > STALE_MS) rmSync(p, { recursive: true, force: true })
    } catch {
      // removed by another worker meanwhile
    }
  }
  return main
}
