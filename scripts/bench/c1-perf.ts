/**
 * @module
 * The gateway's serving thread under `perf` at one request at a time (stop 60): a gateway on the
 * plain key (this checkout, or `--root CHECKOUT`), warmed at c8, then `--n` requests at c=1 (one
 * mode: `--stream` or not) under `perf stat` (page faults, context switches, CPU migrations of the
 * whole process, a request) and, with `--record FILE`, `perf record -g` of the serving thread (its
 * tid is its pid), kernel stacks included: `perf report -i FILE --no-children` for where the loop's
 * time goes below JavaScript (system calls, faults, wake-ups). `--governed`: the governed key and
 * route (TPM + TPD + budget + fallback, as the lane's) instead of the plain one.
 *
 * `bun scripts/bench/c1-perf.ts [--stream] [--governed] [--n 3000] [--warm 10000] [--record FILE] [--root CHECKOUT]`
 */
import { readFileSync } from 'node:fs'
import { option } from './argv.ts'
import { oneAtATime } from './c1-client.ts'
import { findWrk } from './loadgen-wrk.ts'
import { startGateway, startMocks, workspace } from './processes.ts'
import { type Ctx, closedLoad } from './scenarios.ts'
import { laneRoute } from './tokens.ts'

const stream = process.argv.includes('--stream')
const n = Number(option('--n') ?? 3000)
const warm = Number(option('--warm') ?? 10_000)
const record = option('--record')
const load1 = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]

const mocks = await startMocks(20)
const ws = workspace()
try {
  const gw = await startGateway(ws, mocks, {
    binary: false,
    root: option('--root'),
    env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
  })
  const governed = process.argv.includes('--governed')
  const target = await laneRoute(gw, ws.dir, governed, stream)
  const ctx = { wrk: findWrk(), dir: ws.dir } as Ctx
  let sent = 0
  while (sent < warm) sent += (await closedLoad(ctx, target, 8, 3)).requests
  const send = () => oneAtATime(target, n)
  const perf = async (args: string[]) => {
    const p = Bun.spawn(['perf', ...args], { stdout: 'pipe', stderr: 'pipe' })
    await Bun.sleep(500)
    const l0 = load1()
    await send()
    p.kill('SIGINT')
    const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
    await p.exited
    return { text: out + err, load: `${l0} → ${load1()}` }
  }
  const stat = await perf([
    'stat',
    '-x,',
    '-e',
    'page-faults,minor-faults,major-faults,context-switches,cpu-migrations,task-clock',
    '-p',
    String(gw.pid),
  ])
  console.log(
    `${governed ? 'governed ' : ''}${stream ? 'stream' : 'non-stream'}, ${n} requests at c=1 after ${sent} warm; load ${stat.load}`,
  )
  for (const line of stat.text.split('\n')) {
    const f = line.split(',')
    if (f.length > 3 && f[0] && !Number.isNaN(Number(f[0])))
      console.log(`  ${f[2]}: ${(Number(f[0]) / n).toFixed(2)} a request${f[1] ? ` (${f[1]})` : ''}`)
  }
  if (record) {
    const r = await perf(['record', '-g', '-F', '4999', '-t', String(gw.pid), '-o', record])
    console.log(`recorded ${record}; load ${r.load}`)
  }
  await gw.stop()
} finally {
  await mocks.stop()
  ws.remove()
}
