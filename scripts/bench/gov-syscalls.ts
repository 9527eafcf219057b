/**
 * @module
 * The system calls a governed request costs beside a plain one (issues 41, 46): one gateway (this
 * checkout, or `--root` another's), its plain key (`mock/bench`, no limits) and a metered key (TPM +
 * TPD + budget, `mock/bench-priced`), each warmed, then `strace -f` on every thread of the serving
 * process while a fixed number of requests of one route run, the routes in turn. Prints, per route,
 * each system call's count a request by the thread that made it (its `comm`: the event loop
 * `bun`, the usage writer, the checkpointer, the HTTP client …), and the same over an idle stretch
 * as long as the route's run (what the timers do anyway, counted apart).
 *
 * `--cpu`: no trace; each thread's CPU a request instead (its system time and minor page faults apart),
 * the routes interleaved over `--rounds` rounds, then the RSS after the load and after 3 s idle.
 * The gateway runs with mimalloc's defaults; `--env MIMALLOC_PURGE_DELAY=1000,…`
 * runs it with others (`PURGE_DELAY` and `PURGE_HOLES_MIN_INTERVAL` default to 100 ms).
 *
 * bun scripts/bench/gov-syscalls.ts [--cpu [--rounds R]] [--env K=V,...] [--requests N] [--warm N] [--concurrency C] [--stream] [--root CHECKOUT]
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { option } from './argv.ts'
import { statusBytes, ticksPerSecond } from './proc-stats.ts'
import { PRICED_MODEL, startGateway, startMocks, workspace } from './processes.ts'
import { meteredKey } from './tokens.ts'
import { chatTarget } from './workload.ts'

const requests = Number(option('--requests') ?? 2000)
const warm = Number(option('--warm') ?? 5000)
const concurrency = Number(option('--concurrency') ?? 1)
const stream = process.argv.includes('--stream')
const root = option('--root')

const mocks = await startMocks(20)
const ws = workspace()
/** `--env K=V,K=V`: the gateway's environment beside the bench's own. */
const env = Object.fromEntries(
  (option('--env') ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => kv.split('=')),
)
const gw = await startGateway(ws, mocks, {
  binary: false,
  root,
  env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096', ...env },
})
const routes = {
  plain: chatTarget(gw.url, 'mock/bench', stream, gw.key),
  metered: chatTarget(gw.url, `mock/${PRICED_MODEL}`, stream, await meteredKey(gw, ws.dir, false)),
}

async function load(route: keyof typeof routes, n: number): Promise<number> {
  const t = routes[route]
  let left = n
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body })
        if (res.status !== 200) throw new Error(`${route}: ${res.status} ${await res.text()}`)
        await res.arrayBuffer()
      }
    }),
  )
  return performance.now() - t0
}

/** Each thread's name by its id, as it is now (threads live as long as the process here). */
function threadNames(pid: number): Map<string, string> {
  const names = new Map<string, string>()
  for (const tid of readdirSync(`/proc/${pid}/task`))
    names.set(tid, readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim())
  return names
}

/** Each thread's name and CPU µs (utime + stime) now. */
function threadCpu(pid: number): Map<string, number> {
  const cpu = new Map<string, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const tick = 1_000_000 / ticksPerSecond()
      cpu.set(name, (cpu.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) * tick)
      // The kernel's share apart (page faults, system calls).
      cpu.set(`${name} (sys)`, (cpu.get(`${name} (sys)`) ?? 0) + Number(f[12]) * tick)
      // Minor page faults (a page the allocator gave back, touched again), as a count.
      cpu.set(`${name} (faults)`, (cpu.get(`${name} (faults)`) ?? 0) + Number(f[7]))
    } catch {}
  }
  return cpu
}

/** (thread name, call) → count, over what `body` does while strace follows every thread. */
async function traced(body: () => Promise<unknown>): Promise<Map<string, number>> {
  const out = join(ws.dir, `strace-${crypto.randomUUID().slice(0, 8)}.txt`)
  const s = Bun.spawn(['strace', '-f', '-qq', '-o', out, '-p', String(gw.pid)], {
    stdout: 'ignore',
    stderr: 'pipe',
  })
  // strace says nothing once attached with -qq: give it time to take every thread.
  await Bun.sleep(1000)
  const names = threadNames(gw.pid)
  await body()
  s.kill('SIGINT')
  await s.exited
  const counts = new Map<string, number>()
  for (const line of readFileSync(out, 'utf8').split('\n')) {
    const m = /^(\d+)\s+(?:<\.\.\. )?(\w+)/.exec(line)
    if (!m || line.includes('resumed>') || line.startsWith('+++') || line.includes('--- SIG')) continue
    const k = `${names.get(m[1]!) ?? `tid ${m[1]}`}\t${m[2]}`
    counts.set(k, (counts.get(k) ?? 0) + 1)
  }
  rmSync(out)
  return counts
}

console.log(
  `${stream ? 'stream' : 'non-stream'}, c${concurrency}, ${requests} requests a route (warm ${warm}), load ${loadavg()[0]!.toFixed(1)}`,
)
for (const r of ['plain', 'metered'] as const) await load(r, warm)
if (process.argv.includes('--cpu')) {
  // No trace: each thread's CPU a request, the routes interleaved over `--rounds` rounds.
  const rounds = Number(option('--rounds') ?? 6)
  const sums: Record<string, Map<string, number[]>> = { plain: new Map(), metered: new Map() }
  for (let i = 0; i < rounds; i++) {
    for (const r of i % 2 ? (['metered', 'plain'] as const) : (['plain', 'metered'] as const)) {
      const c0 = threadCpu(gw.pid)
      await load(r, requests)
      for (const [name, us] of threadCpu(gw.pid)) {
        const list = sums[r]!.get(name) ?? []
        list.push((us - (c0.get(name) ?? 0)) / requests)
        sums[r]!.set(name, list)
      }
    }
  }
  const med = (v: number[] | undefined) => (v ? [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]! : 0)
  console.log('thread\tplain µs\tmetered µs (medians of rounds; faults: a count)')
  for (const name of new Set([...sums.plain!.keys(), ...sums.metered!.keys()]))
    console.log(
      `${name}\t${med(sums.plain!.get(name)).toFixed(1)}\t${med(sums.metered!.get(name)).toFixed(1)}`,
    )
  // What the process keeps: right after the load, and after 3 s idle (the idle collection runs after 1 s).
  const rss = () => (statusBytes(gw.pid) / 2 ** 20).toFixed(1)
  const after = rss()
  await Bun.sleep(3000)
  console.log(`RSS ${after} MB after the load, ${rss()} MB after 3 s idle; load ${loadavg()[0]!.toFixed(1)}`)
  await gw.stop()
  await mocks.stop()
  ws.remove()
  process.exit(0)
}
const runs: Record<string, { counts: Map<string, number>; ms: number }> = {}
for (const r of ['plain', 'metered'] as const) {
  let ms = 0
  const counts = await traced(async () => {
    ms = await load(r, requests)
  })
  runs[r] = { counts, ms }
  runs[`idle ${r}`] = { counts: await traced(() => Bun.sleep(ms)), ms }
}
const keys = [...new Set(Object.values(runs).flatMap((x) => [...x.counts.keys()]))].sort()
console.log(['thread\tcall', ...Object.keys(runs)].join('\t'))
for (const k of keys) {
  const per = Object.values(runs).map((x) => ((x.counts.get(k) ?? 0) / requests).toFixed(2))
  if (per.every((v) => v === '0.00')) continue
  console.log([k, ...per].join('\t'))
}
for (const [name, x] of Object.entries(runs)) {
  const total = [...x.counts.values()].reduce((a, b) => a + b, 0)
  console.log(`${name}: ${(total / requests).toFixed(1)} calls a request, ${x.ms.toFixed(0)} ms`)
}
console.log(`load ${loadavg()[0]!.toFixed(1)}`)
await gw.stop()
await mocks.stop()
ws.remove()
