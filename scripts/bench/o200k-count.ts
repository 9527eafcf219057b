/**
 * @module
 * What counting o200k costs (src/limits/o200k.ts), this checkout beside another (`--before DIR`:
 * an export of main with `node_modules` linked, say), their runs alternated so the host's load
 * falls on both alike. CPU (user + system), not wall time: a shared machine's waits do not count.
 *
 * - Default: µs of CPU per count, in one process, best and median of the rounds: a 200-token chat
 *   message and a 30 KB agent context (the same text each count, as a cache would best serve it),
 *   64 KB of random CJK and of base64, and hostile megabytes: random letters without a space and
 *   random bytes (a new text each count: clients choose them).
 * - `--load`: a cold process per side and round: importing o200k.ts and the first count (wall and
 *   CPU), the resident memory then, and one full collection (`Bun.gc(true)`) after it.
 * - `--serve`: a cold `serve` per side and round with a plan that counts tokens (`tpm`): its CPU
 *   (all threads, /proc; the spawned process and the serving child its ready line names) from
 *   spawn to that line, and the serving process's resident memory then.
 *
 * bun scripts/bench/o200k-count.ts [--before DIR] [--rounds N] [--load | --serve]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import repoTexts from '../../test/fixtures/token-corpus-texts.json'
import { cpuMicros, statusBytes } from './proc-stats.ts'
import { startServer } from './server-child.ts'

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i === -1 ? undefined : process.argv[i + 1]
}
const ROUNDS = Number(option('--rounds') ?? 7)
const before = option('--before')
const sides: [string, string][] = [['this', resolve(import.meta.dir, '../..')]]
if (before) sides.push(['before', resolve(before)])

const cpuMs = () => {
  const c = process.cpuUsage()
  return (c.user + c.system) / 1000
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const fmt = (xs: number[], digits = 1) =>
  `best ${Math.min(...xs).toFixed(digits)}, median ${median(xs).toFixed(digits)}`
/** Side `i`'s turn in round `r`: which goes first alternates. */
const order = (r: number) => (r % 2 === 0 ? sides : [...sides].reverse())

/** Deterministic text of `n` code points drawn from `draw` (of a 16-bit random number). */
function seeded(seed: number, n: number, draw: (x: number) => string): string {
  let s = seed
  let out = ''
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff
    out += draw(s >>> 15) // the high bits: an LCG's low ones repeat with a short period
  }
  return out
}
const cjk = (seed: number) => seeded(seed, 65_536, (x) => String.fromCharCode(0x4e00 + (x % 20_000)))
const letters = (seed: number) => seeded(seed, 1 << 20, (x) => String.fromCharCode(97 + (x % 26)))
const base64 = (seed: number) =>
  Buffer.from(
    seeded(seed, 49_152, (x) => String.fromCharCode(x & 0xff)),
    'latin1',
  )
    .toString('base64')
    .slice(0, 65_536)

async function speed(): Promise<void> {
  type Counter = (text: string) => { tokens: number }
  const counters = new Map<string, Counter>()
  for (const [name, dir] of sides) {
    // countO200k now; o200kCounter() on checkouts before it (a promise there before 911ded2).
    const m = (await import(join(dir, 'src/limits/o200k.ts'))) as {
      countO200k?: Counter
      o200kCounter?: () => Promise<Counter> | Counter
    }
    counters.set(name, m.countO200k ?? (await m.o200kCounter!()))
  }
  const all = Object.values(repoTexts).join('\n')
  const message = repoTexts['english-prose'].slice(0, 900)
  const context = all.slice(0, 30_720)
  const workloads: [string, number, (i: number) => string][] = [
    [`chat message (${counters.get('this')!(message).tokens} tokens)`, 2_000, () => message],
    [`agent context (30 KB, ${counters.get('this')!(context).tokens} tokens)`, 60, () => context],
    ['64 KB random CJK, a new text each', 3, (i) => cjk(i)],
    ['64 KB base64, a new text each', 3, (i) => base64(i)],
    ['1 MB of random letters without a space', 1, (i) => letters(i)],
    [
      '1 MB of random bytes (U+0000–U+00FF)',
      1,
      (i) => seeded(i, 1 << 20, (x) => String.fromCharCode(x & 0xff)),
    ],
  ]
  for (const [label, n, textOf] of workloads) {
    const texts = Array.from({ length: n * (ROUNDS + 1) }, (_, i) => textOf(i))
    const per = new Map<string, number[]>(sides.map(([s]) => [s, []]))
    // Round 0 warms the JIT and is not kept.
    for (let r = 0; r <= ROUNDS; r++)
      for (const [side] of order(r)) {
        const count = counters.get(side)!
        const t0 = cpuMs()
        for (let i = 0; i < n; i++) count(texts[r * n + i]!)
        if (r > 0) per.get(side)!.push(((cpuMs() - t0) * 1000) / n)
      }
    console.log(label)
    for (const [side, xs] of per) console.log(`  ${side.padEnd(7)} µs a count: ${fmt(xs)}`)
  }
}

async function load(): Promise<void> {
  const child = (dir: string) => `
    const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000 }
    const w0 = performance.now(), c0 = cpu()
    const m = await import(${JSON.stringify(join(dir, 'src/limits/o200k.ts'))})
    ;(m.countO200k ?? (await m.o200kCounter()))('Hello, world! The first count.')
    const w1 = performance.now(), c1 = cpu()
    const rss = process.memoryUsage().rss
    Bun.gc(true)
    const g0 = performance.now(); Bun.gc(true); const g1 = performance.now()
    console.log(JSON.stringify({ wall: w1 - w0, cpu: c1 - c0, rss: rss / 1048576, gc: g1 - g0 }))`
  const per = new Map(
    sides.map(([s]) => [
      s,
      { wall: [] as number[], cpu: [] as number[], rss: [] as number[], gc: [] as number[] },
    ]),
  )
  for (let r = 0; r < ROUNDS; r++)
    for (const [side, dir] of order(r)) {
      const p = Bun.spawnSync([process.execPath, '-e', child(dir)], { cwd: dir, stderr: 'inherit' })
      const m = JSON.parse(p.stdout.toString()) as Record<'wall' | 'cpu' | 'rss' | 'gc', number>
      const into = per.get(side)!
      for (const k of ['wall', 'cpu', 'rss', 'gc'] as const) into[k].push(m[k])
    }
  for (const [side, m] of per)
    console.log(
      `${side.padEnd(7)} import + first count: wall ms ${fmt(m.wall)}; CPU ms ${fmt(m.cpu)}; ` +
        `RSS MB ${fmt(m.rss)}; a full GC ms ${fmt(m.gc, 2)}`,
    )
}

async function serve(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'o200k-serve-'))
  const config = join(work, 'switchyard.yaml')
  writeFileSync(
    config,
    [
      'providers:',
      '  - { prefix: demo, kind: demo, models: [{ name: echo, context_window: 8192, max_output_tokens: 1024, features: [streaming] }] }',
      'plans:',
      '  metered: { rpm: null, rpd: null, tpm: 100000, models: ["*"] }',
      'default_plan: metered',
      '',
    ].join('\n'),
  )
  const per = new Map(sides.map(([s]) => [s, { cpu: [] as number[], rss: [] as number[] }]))
  try {
    for (let r = 0; r < ROUNDS; r++)
      for (const [side, dir] of order(r)) {
        const db = join(work, `${side}-${r}.db`)
        const cmd = [process.execPath, join(dir, 'src/main.ts'), 'serve', '--port', '0', '--json']
        // No health check: the CPU and RSS are read at the ready line, before any request.
        const p = await startServer<{ pid: number }>([...cmd, '--config', config, '--db', db], {
          stderr: join(work, `${side}-${r}.log`),
        })
        // The ready line names the serving process (a child of the one spawned, which waits on it).
        const served = p.info.pid
        const pids = served === p.proc.pid ? [p.proc.pid] : [p.proc.pid, served]
        const into = per.get(side)!
        into.cpu.push(pids.reduce((n, pid) => n + cpuMicros(pid), 0) / 1000)
        into.rss.push(statusBytes(served) / 1048576)
        await p.stop()
      }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  for (const [side, m] of per)
    console.log(`${side.padEnd(7)} serve to ready: CPU ms ${fmt(m.cpu, 0)}; RSS MB ${fmt(m.rss)}`)
}

const { loadavg } = await import('node:os')
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}; ${ROUNDS} rounds`,
)
await (process.argv.includes('--load') ? load() : process.argv.includes('--serve') ? serve() : speed())
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
)
