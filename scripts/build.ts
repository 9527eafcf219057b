/**
 * `bun run build`: compiles the gateway into one executable, dist/switchyard.
 * Everything it needs (code, dependencies, the Bun runtime) is inside the file.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
const out = join(root, 'dist', 'switchyard')
mkdirSync(join(root, 'dist'), { recursive: true })
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
    // writer thread: src/store/sqlite/usage-writer.ts finds it there).
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
