/**
 * @module
 * System calls and context switches a request, per thread, at one request at a time (stop 60):
 * the bare prototype, Caddy (when found), the gateway on the plain key (and `--governed`, on the
 * governed route) and `--gw NAME=DIR` checkouts, non-stream and stream. Each target is warmed, then
 * sent `--n` requests untraced — CPU, switches (voluntary + involuntary) and run-queue wait per
 * thread from /proc — and `--n` more under `strace -f` (every thread; strace's stops make those
 * requests slow, so only its counts are read): per request and thread, each system call.
 * `--keep DIR` copies each trace there (`strace-<pid>-<target>-<mode>.txt`), to read one
 * request's calls in order.
 *
 * `bun scripts/bench/c1-syscalls.ts [--n 500] [--warm 2000] [--governed] [--only a,b] [--keep DIR] [--gw NAME=DIR]...`
 */
import { copyFileSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startBareProxy } from './bare.ts'
import { type LaneTarget, oneAtATime } from './c1-client.ts'
import { findCaddy, startCaddy } from './caddy.ts'
import { type ThreadStats, threadStats } from './proc-stats.ts'
import { FULL_MODEL, REPO, startGateway, startMocks, workspace } from './processes.ts'
import { meteredKey } from './tokens.ts'
import { chatTarget, type Target } from './workload.ts'

const argv = Bun.argv.slice(2)
const opt = (name: string, d: string) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1]! : d
}
const N = Number(opt('--n', '500'))
const WARM = Number(opt('--warm', '2000'))
const only = argv.includes('--only') ? opt('--only', '').split(',') : null
/** `--keep DIR`: each trace file copied there, named by pid and cell. */
const keep = argv.includes('--keep') ? opt('--keep', '') : null
const gws: { name: string; dir: string }[] = []
for (let i = 0; i < argv.length; i++) {
  if (argv[i] !== '--gw') continue
  const [name, dir] = argv[++i]!.split('=') as [string, string]
  gws.push({ name, dir })
}

interface Subject {
  name: string
  pid: number
  target(stream: boolean): Target
}

const log = (s: string) => console.log(s)
const ws = workspace()
const mocks = await startMocks(20)
const stops: (() => Promise<void>)[] = []
const subjects: Subject[] = []
try {
  const bare = await startBareProxy({ mocks, dir: ws.dir })
  stops.push(() => bare.stop())
  subjects.push({ name: 'bare', pid: bare.pid, target: (s) => chatTarget(bare.base, 'bench', s, bare.key) })
  const exe = findCaddy()
  if (exe) {
    const caddy = await startCaddy(exe, mocks.fast.url, ws.dir)
    stops.push(() => caddy.stop())
    subjects.push({ name: 'caddy', pid: caddy.pid, target: (s) => chatTarget(caddy.url, 'bench', s) })
  } else log('caddy: not found ($CADDY), skipped')
  for (const g of [{ name: 'plain', dir: REPO }, ...gws]) {
    const dir = join(ws.dir, g.name)
    const gw = await startGateway({ dir }, mocks, {
      binary: false,
      env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
      root: g.dir === REPO ? undefined : g.dir,
    })
    stops.push(() => gw.stop())
    subjects.push({ name: g.name, pid: gw.pid, target: (s) => chatTarget(gw.url, 'mock/bench', s, gw.key) })
    if (argv.includes('--governed')) {
      const key = await meteredKey(gw, dir, false, 'bench-lane')
      subjects.push({
        name: `${g.name}-gov`,
        pid: gw.pid,
        target: (s) => chatTarget(gw.url, `mock/${FULL_MODEL}`, s, key),
      })
    }
  }
  const send = oneAtATime
  log(`load ${loadavg()}; ${N} requests a cell; warm ${WARM} each`)
  log(
    '| target | mode | CPU µs/req by thread | switches/req by thread | runq wait µs/req | syscalls/req (traced) by thread |',
  )
  log('|---|---|---|---|---|---|')
  for (const s of subjects) {
    if (only && !only.includes(s.name)) continue
    for (const stream of [false, true]) {
      const t: LaneTarget = { ...s.target(stream), name: s.name, stream }
      await send(t, WARM)
      const b = threadStats(s.pid)
      const r0 = await send(t, N)
      const a = threadStats(s.pid)
      const errs = r0.errors[s.name] ?? 0
      const traced = await traceCounts(s.pid, `${s.name}-${stream ? 'stream' : 'json'}`, () => send(t, N))
      log(
        `| ${s.name} | ${stream ? 'stream' : 'json'} | ${perThread(a, b, 'cpu')} | ${perThread(a, b, 'sw')} | ${((a.waitNs - b.waitNs) / 1000 / N).toFixed(0)} | ${traced.summary}${errs ? ` (errors ${errs})` : ''} |`,
      )
    }
  }
  log(`load ${loadavg()}`)
} finally {
  for (const s of stops.reverse()) await s().catch(() => {})
  await mocks.stop()
  ws.remove()
}

function loadavg(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
}

/** Per thread name: µs on a core a request, or switches a request, those that ran. */
function perThread(a: ThreadStats, b: ThreadStats, what: 'cpu' | 'sw'): string {
  const by: Record<string, number> = {}
  for (const [tid, now] of Object.entries(a.perThread)) {
    const was = b.perThread[tid]
    const v = what === 'cpu' ? (now.runNs - (was?.runNs ?? 0)) / 1000 : now.switches - (was?.switches ?? 0)
    if (v > 0) by[now.comm] = (by[now.comm] ?? 0) + v
  }
  return Object.entries(by)
    .sort((x, y) => y[1] - x[1])
    .filter(([, v]) => v / N >= (what === 'cpu' ? 1 : 0.05))
    .map(([k, v]) => `${k} ${(v / N).toFixed(what === 'cpu' ? 0 : 2)}`)
    .join(', ')
}

/** Runs `work` under `strace -f -p pid`; counts each thread's calls a request. */
async function traceCounts(
  pid: number,
  tag: string,
  work: () => Promise<unknown>,
): Promise<{ summary: string }> {
  const out = join(ws.dir, `strace-${pid}-${Date.now()}.txt`)
  const comm: Record<string, string> = {}
  const names = () => {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        comm[tid] = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()
      } catch {}
    }
  }
  names()
  const st = Bun.spawn(['strace', '-f', '-ttt', '-qq', '-o', out, '-p', String(pid)], {
    stdout: 'ignore',
    stderr: 'ignore',
  })
  await Bun.sleep(700)
  await work()
  await Bun.sleep(200)
  names()
  st.kill('SIGINT')
  await st.exited
  if (keep) copyFileSync(out, join(keep, `strace-${pid}-${tag}.txt`))
  const lines = readFileSync(out, 'utf8').split('\n')
  const counts: Record<string, Record<string, number>> = {}
  for (const line of lines) {
    const m = /^(\d+)\s+([\d.]+)\s+(?:<\.\.\. )?(\w+)/.exec(line)
    if (!m || line.includes('resumed>')) continue
    const who = comm[m[1]!] ?? m[1]!
    const c = counts[who] ?? {}
    counts[who] = c
    c[m[3]!] = (c[m[3]!] ?? 0) + 1
  }
  const summary = Object.entries(counts)
    .map(([who, c]) => {
      const total = Object.values(c).reduce((x, y) => x + y, 0)
      const calls = Object.entries(c)
        .sort((x, y) => y[1] - x[1])
        .filter(([, v]) => v / N >= 0.05)
        .map(([k, v]) => `${k} ${(v / N).toFixed(2)}`)
        .join(' ')
      return { who, total, text: `**${who} ${(total / N).toFixed(1)}**: ${calls}` }
    })
    .filter((x) => x.total / N >= 0.05)
    .sort((x, y) => y.total - x.total)
    .map((x) => x.text)
    .join('; ')
  return { summary }
}
