/**
 * @module
 * Closed-loop load with wrk (Debian's `wrk` package), when it is installed. A generated Lua
 * script sets the POST body and headers and prints wrk's summary as one JSON line. One wrk
 * thread: on a small machine a second one would only take CPU from the process being measured.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LoadResult, Target } from './workload.ts'

export function findWrk(): { path: string; version: string } | null {
  const path = Bun.which('wrk')
  if (!path) return null
  const r = Bun.spawnSync([path, '-v'], { stdout: 'pipe', stderr: 'pipe' })
  const text = `${r.stdout.toString()}${r.stderr.toString()}`
  return { path, version: /^wrk\s+(\S+)/m.exec(text)?.[1] ?? 'unknown' }
}

/** Lua long brackets with a level no body can close early. */
const luaString = (s: string): string => {
  let eq = '='
  while (s.includes(`]${eq}]`)) eq += '='
  return `[${eq}[${s}]${eq}]`
}

function luaScript(t: Target): string {
  const headers = Object.entries(t.headers)
    .map(([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`)
    .join('\n')
  return `wrk.method = "POST"
wrk.body = ${luaString(t.body)}
${headers}
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
`
}

export async function runWrk(
  wrk: string,
  dir: string,
  t: Target,
  connections: number,
  durationS: number,
): Promise<LoadResult> {
  const script = join(dir, 'post.lua')
  writeFileSync(script, luaScript(t))
  const cmd = [wrk, '-t1', `-c${connections}`, `-d${durationS}s`, '--timeout', '10s', '-s', script, t.url]
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  const killer = setTimeout(() => proc.kill('SIGKILL'), (durationS + 30) * 1000)
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  await proc.exited
  clearTimeout(killer)
  const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '))
  if (!line) throw new Error(`wrk gave no summary: ${(err || out).trim().slice(-400)}`)
  const s = JSON.parse(line.slice(11)) as Record<string, number>
  const detail = {
    connect: s.connect!,
    read: s.read!,
    write: s.write!,
    status: s.status!,
    timeout: s.timeout!,
  }
  const durS = s.duration_us! / 1e6
  return {
    tool: 'wrk',
    requests: s.requests!,
    durationS: durS,
    rps: s.requests! / durS,
    p50Ms: s.p50_us! / 1000,
    p99Ms: s.p99_us! / 1000,
    errors: Object.values(detail).reduce((a, b) => a + b, 0),
    errorDetail: detail,
  }
}
