/**
 * @module
 * How often an admission at one request at a time is retried on a busy lock (stop 61: the usage
 * thread's write transaction): a gateway (this checkout, or `--root` another's) on its governed
 * route (the lane's key), warmed,
 * then `--n` requests at c=1 while `strace --seccomp-bpf` follows only the loop's `statx` (the
 * store's file check, once a flush of the admissions: `assertFile`) and `sendto` (the answer), so
 * the threads that write are not slowed. A flush that finds the lock taken is retried on a timer
 * (admissions.ts `retry`), with the check again: the check's calls beyond one a request are the
 * retries (plus serve's own watch of the file, once a second: ~0.001 a request at these rates).
 * `--plain`: the plain key's route instead.
 *
 * `bun scripts/bench/admit-retries.ts [--n 3000] [--warm 5000] [--plain] [--root CHECKOUT]`
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { option } from './argv.ts'
import { oneAtATime } from './c1-client.ts'
import { startGateway, startMocks, workspace } from './processes.ts'
import { laneRoute } from './tokens.ts'

const n = Number(option('--n') ?? 3000)
const warm = Number(option('--warm') ?? 5000)
const plain = process.argv.includes('--plain')
const mocks = await startMocks(20)
const ws = workspace()
try {
  const gw = await startGateway(ws, mocks, {
    binary: false,
    root: option('--root'),
    env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
  })
  const target = await laneRoute(gw, ws.dir, !plain, false)
  const send = (k: number) => oneAtATime(target, k)
  await send(warm)
  const out = join(ws.dir, 'trace.txt')
  const st = Bun.spawn(
    ['strace', '-f', '--seccomp-bpf', '-qq', '-e', 'trace=statx,sendto', '-o', out, '-p', String(gw.pid)],
    { stdout: 'ignore', stderr: 'ignore' },
  )
  await Bun.sleep(700)
  const l0 = readFileSync('/proc/loadavg', 'utf8').split(' ')[0]
  await send(n)
  await Bun.sleep(200)
  st.kill('SIGINT')
  await st.exited
  const lines = readFileSync(out, 'utf8').split('\n')
  const loop = (l: string) => l.startsWith(`${gw.pid} `)
  const checks = lines.filter((l) => loop(l) && l.includes('statx(') && l.includes('.db"')).length
  const answers = lines.filter((l) => loop(l) && l.includes('sendto(') && l.includes('HTTP/1.1')).length
  const l1 = readFileSync('/proc/loadavg', 'utf8').split(' ')[0]
  console.log(
    `${plain ? 'plain' : 'governed'} ${option('--root') ?? 'this checkout'}: ${answers} answers, ${checks} file checks — ${((checks - answers) / answers).toFixed(3)} retries a request (load ${l0} → ${l1})`,
  )
  await gw.stop()
} finally {
  await mocks.stop()
  ws.remove()
}
