/**
 * @module
 * Linux process figures from /proc: CPU time (utime + stime) and resident memory. Used on the
 * gateway's own pid, so the numbers cover exactly that process and none of the load generator.
 */
import { readdirSync, readFileSync } from 'node:fs'

let clockTicks: number | undefined

/** Kernel clock ticks per second (USER_HZ), the unit of utime/stime in /proc/<pid>/stat. */
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    // 100 on every common Linux build; getconf only confirms it where it is installed.
    const getconf = Bun.which('getconf')
    const out = getconf
      ? Bun.spawnSync([getconf, 'CLK_TCK'], { stdout: 'pipe', stderr: 'ignore' }).stdout
      : ''
    const n = Number(out.toString().trim())
    clockTicks = Number.isFinite(n) && n > 0 ? n : 100
  }
  return clockTicks
}

/** utime + stime of `pid` in microseconds. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // Field 2 (comm) may hold spaces and parentheses: count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // After comm the fields start at 3 (state); utime is field 14, stime field 15.
  const ticks = Number(fields[14 - 3]) + Number(fields[15 - 3])
  return (ticks * 1_000_000) / ticksPerSecond()
}

/** A `/proc/<pid>/status` field in bytes (VmRSS, VmHWM, ...); NaN when the process is gone. */
export function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : Number.NaN
  } catch {
    return Number.NaN
  }
}

export const rssBytes = (pid: number): number => statusBytes(pid, 'VmRSS')

export const MB = 1024 * 1024

/** CPU µs spent by `pid` while `run` executes, with its result. */
export async function measureCpu<T>(
  pid: number,
  run: () => Promise<T>,
): Promise<{ result: T; cpuUs: number }> {
  const before = cpuMicros(pid)
  const result = await run()
  return { result, cpuUs: cpuMicros(pid) - before }
}

/** The machine, as BENCHMARKS.md reports it. */
export function machineInfo(): { nproc: number; cpu: string; memoryGiB: number; kernel: string } {
  const cpuinfo = safeRead('/proc/cpuinfo')
  const meminfo = safeRead('/proc/meminfo')
  const cpu = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown'
  const memKb = Number(/^MemTotal:\s+(\d+) kB/m.exec(meminfo)?.[1] ?? 0)
  return {
    nproc: navigator.hardwareConcurrency,
    cpu,
    memoryGiB: Math.round((memKb / 1024 / 1024) * 10) / 10,
    kernel: safeRead('/proc/sys/kernel/osrelease').trim(),
  }
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

/**
 * utime + stime of each of `pid`'s threads, in microseconds, summed by thread name (`comm`: Bun's
 * HTTP client, JavaScriptCore's GC helpers and JIT workers, the main thread under the process's
 * name). A sampling profile sees the main thread only; this tells where the rest of the CPU went.
 */
export function cpuMicrosByThread(pid: number): Record<string, number> {
  const out: Record<string, number> = {}
  let tids: string[]
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return out
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\s*\d+$/, '')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const ticks = Number(fields[14 - 3]) + Number(fields[15 - 3])
      out[name] = (out[name] ?? 0) + (ticks * 1_000_000) / ticksPerSecond()
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out
}

/**
 * µs on a core of `pid`'s main thread — the event loop, where the request's JavaScript runs (its
 * tid is its pid) — from schedstat (ns), not the tick-grained stat.
 */
export function loopMicros(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000
}

/** Scheduling counts of every thread of a process, summed and per thread (by tid). */
export interface ThreadStats {
  voluntary: number
  involuntary: number
  /** ns runnable but waiting for a core (`/proc/<pid>/task/<tid>/schedstat`, second field). */
  waitNs: number
  perThread: Record<string, { comm: string; switches: number; runNs: number }>
}

/** From `/proc/<pid>/task/*`: context switches, time on a core and run-queue wait (threads gone meanwhile are not counted). */
export function threadStats(pid: number): ThreadStats {
  const out: ThreadStats = { voluntary: 0, involuntary: 0, waitNs: 0, perThread: {} }
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
      const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0)
      const vol = field('voluntary_ctxt_switches')
      const invol = field('nonvoluntary_ctxt_switches')
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number)
      out.voluntary += vol
      out.involuntary += invol
      out.waitNs += wait!
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()
      out.perThread[tid] = { comm, switches: vol + invol, runNs: run! }
    } catch {}
  }
  return out
}
