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
    join(root, 'src/main.ts'),
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
