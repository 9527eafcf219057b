/**
 * @module
 * Stream to the first content byte, taken apart (issue 46): one server process a variant
 * (stream-first-serve.ts — a JSON answer, Bun's native pipe, a JS pull stream, the gateway's
 * writer with the chat byte relay from one or more checkouts), the mock in this process, the c=1
 * lane's client in its own (c1-client.ts) sending one request at a time in interleaved rounds.
 * Per variant: p50 / p99 µs to the first content byte (the JSON one: to its last byte) minus
 * direct's, and the server's loop thread's CPU µs a request (/proc/<pid>/task/<pid>/stat),
 * round by round.
 *
 * `bun scripts/bench/stream-first-micro.ts [--rounds N] [--batch N] [--src NAME=DIR]...`
 * (`--src` adds a `writer` variant from DIR's `src/`; this checkout's is `writer`). `FINISH_US=N` in the
 * environment passes to the servers (stream-first-serve.ts).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type LaneTarget, runLaneClient } from './c1-client.ts'
import { ticksPerSecond } from './proc-stats.ts'
import { startMocks } from './processes.ts'
import { startServer } from './server-child.ts'
import { chatTarget, quantile, sortedCopy } from './workload.ts'

const argv = Bun.argv.slice(2)
const opt = (name: string, dflt: number) => {
  const i = argv.indexOf(name)
  return i >= 0 ? Number(argv[i + 1]) : dflt
}
const rounds = opt('--rounds', 20)
const batch = opt('--batch', 100)
const variants: { name: string; variant: string; src?: string }[] = [
  { name: 'json', variant: 'json' },
  { name: 'native', variant: 'native' },
  { name: 'read-whole', variant: 'read-whole' },
  { name: 'js-out', variant: 'js-out' },
  { name: 'js', variant: 'js' },
  { name: 'direct', variant: 'direct' },
  { name: 'js-hold', variant: 'js-hold' },
  { name: 'direct-hold', variant: 'direct-hold' },
  { name: 'js-hold-busy', variant: 'js-hold-busy' },
  { name: 'writer', variant: 'writer' },
  { name: 'writer-pass', variant: 'writer-pass' },
]
for (let i = 0; i < argv.length; i++) {
  if (argv[i] !== '--src') continue
  const spec = argv[++i]!
  const eq = spec.indexOf('=')
  variants.push({ name: spec.slice(0, eq), variant: 'writer', src: join(spec.slice(eq + 1), 'src') })
}

/** utime + stime of the process's main (loop) thread, µs. */
function loopMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(f[11]) + Number(f[12])) * 1e6) / ticksPerSecond()
}
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]

const mocks = await startMocks(20)
const servers: { name: string; pid: number; base: string; stop(): Promise<void> }[] = []
try {
  for (const v of variants) {
    const { info, stop } = await startServer<{ port: number; pid: number }>(
      [
        process.execPath,
        join(import.meta.dir, 'stream-first-serve.ts'),
        mocks.fast.url,
        v.variant,
        ...(v.src ? [v.src] : []),
      ],
      { env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' } },
    )
    servers.push({ name: v.name, pid: info.pid, base: `http://127.0.0.1:${info.port}/v1`, stop })
  }
  const targets: LaneTarget[] = [
    { ...chatTarget(mocks.fast.url, 'bench', false), name: 'direct/json', stream: false },
    { ...chatTarget(mocks.fast.url, 'bench', true), name: 'direct/stream', stream: true },
    ...servers.map((s) => {
      const stream = s.name !== 'json'
      return { ...chatTarget(s.base, 'bench', stream), name: s.name, stream }
    }),
  ]
  // JIT and pools first, apart from the counted rounds.
  await runLaneClient({ targets, rounds: 0, batch: 0, warm: 3000, stamps: false, gaps: false })
  const cpu0 = servers.map((s) => loopMicros(s.pid))
  const load0 = loadavg()
  const run = await runLaneClient({ targets, rounds, batch, warm: 0, stamps: false, gaps: false })
  const cpu = servers.map((s, i) => (loopMicros(s.pid) - cpu0[i]!) / (rounds * batch))
  console.log(`${rounds} rounds × ${batch}, load ${load0} → ${loadavg()}`)
  const pooled = (xs: number[][]) => sortedCopy(xs.flat())
  const dj = pooled(run.total['direct/json']!)
  const ds = pooled(run.first['direct/stream']!)
  console.log(
    `direct: JSON p50 ${quantile(dj, 0.5).toFixed(0)} µs, stream first byte p50 ${quantile(ds, 0.5).toFixed(0)} µs`,
  )
  console.log('| variant | added p50 µs | added p99 µs | round p50s (min–max) | loop CPU µs a request |')
  console.log('|---|---|---|---|---|')
  servers.forEach((s, i) => {
    const json = s.name === 'json'
    const per = json ? run.total[s.name]! : run.first[s.name]!
    const d = json ? dj : ds
    const mine = pooled(per)
    const byRound = per.map((r) => quantile(sortedCopy(r), 0.5))
    const lo = Math.min(...byRound)
    const hi = Math.max(...byRound)
    console.log(
      `| ${s.name} | +${(quantile(mine, 0.5) - quantile(d, 0.5)).toFixed(0)} | +${(quantile(mine, 0.99) - quantile(d, 0.99)).toFixed(0)} | ${lo.toFixed(0)}–${hi.toFixed(0)} | ${cpu[i]!.toFixed(0)} |`,
    )
  })
  const errors = Object.entries(run.errors).filter(([, v]) => v)
  if (errors.length) console.log(`errors: ${JSON.stringify(Object.fromEntries(errors))}`)
} finally {
  for (const s of servers) await s.stop()
  await mocks.stop()
}
