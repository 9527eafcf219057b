/**
 * `bun run build`: compiles the gateway into one executable, dist/switchyard.
 * Everything it needs (code, dependencies, the Bun runtime) is inside the file.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
const dist = join(root, 'dist')
const out = join(dist, 'switchyard')
mkdirSync(dist, { recursive: true })
// The split build writes a source map per chunk beside the binary, named by the chunk's hash:
// those of earlier builds are removed first, or every rebuild would leave ~26 more behind.
for (const name of readdirSync(dist)) if (name.endsWith('.js.map')) rmSync(join(dist, name))
const started = performance.now()
const proc = Bun.spawnSync(
  [
    process.execPath,
    'build',
    '--compile',
    '--minify',
    '--sourcemap',
    // Each command's modules in chunks of their own, read when the command runs (src/main.ts
    // imports them dynamically): `--version` does not parse the server's 1.9 MB.
    '--splitting',
    join(root, 'src/main.ts'),
    // A worker's module is an entry point of its own in a compiled program (the usage flush's
    // writer thread: src/store/sqlite/usage-writer.ts finds it there). A binary compiled without
    // it loses no usage row: serve logs one error line at start (ModuleNotFound) and writes the
    // flush on the event loop, as before the thread (measured, stop 63) — only slower at the tail.
    join(root, 'src/store/sqlite/usage-thread.ts'),
    '--outfile',
    out,
  ],
  { cwd: root, stdout: 'inherit', stderr: 'inherit' },
)
if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1)
const size = Bun.file(out).size
console.log(
  `built ${out} (${(size / 1024 / 1024).toFixed(1)} MiB) in ${Math.round(performance.now() - started)} ms`,
)
