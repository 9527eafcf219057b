/**
 * `/healthz` latency judged beside an idle control server in a process of its own. On a loaded
 * machine every process waits for a core, so an absolute figure ("p99 under 100 ms") is one only a
 * quiet machine meets; what a test means to catch — the gateway's event loop stalled by its own
 * work (a 10 MB parse, a busy-wait on a lock) — is the time it takes beyond the control's at the
 * same quantile, probed at the same moments.
 *
 * @example
 * const control = await startControl()
 * const pair = await probePair(gw.url, control.url)     // one probe of each, back to back
 * expect(quantile(gateway, 0.99)).toBeLessThan(100 + quantile(idle, 0.99))
 */
import { readFileSync } from 'node:fs'
import { BUN } from './cli.ts'

export interface Control {
  url: string
  /** The control process's pid, for `probePairOwnTime`'s run-queue correction. */
  pid: number
  stop(): void
}

/** An idle HTTP server (200 `ok` to anything) in its own Bun process on 127.0.0.1. */
export async function startControl(): Promise<Control> {
  const proc = Bun.spawn(
    [
      BUN,
      '-e',
      "const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('ok') }); console.log(s.port)",
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  )
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error('control server exited before it listened')
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return { url: `http://127.0.0.1:${Number(text.trim())}`, pid: proc.pid, stop: () => proc.kill('SIGKILL') }
}

/** Milliseconds for one GET of `url` (the body read), asserting a 200. */
export async function probe(url: string): Promise<number> {
  const started = performance.now()
  const res = await fetch(url)
  await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`)
  return performance.now() - started
}

/** The gateway's `/healthz` and the control, one probe each, back to back. */
export async function probePair(gateway: string, control: string): Promise<[gw: number, idle: number]> {
  const gw = await probe(`${gateway}/healthz`)
  return [gw, await probe(control)]
}

/**
 * Milliseconds process `pid`'s main thread has waited for a core so far (Linux schedstat's
 * run_delay: runnable, not running), or null where the kernel does not keep it. Read synchronously,
 * so that nothing of this process's own scheduling falls between the reading and the probe's fetch.
 */
export function runQueueMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/)
    return fields.length >= 2 ? Number(fields[1]) / 1e6 : null
  } catch {
    return null
  }
}

/**
 * Like `probePair`, with each side's own time: its latency less the time its server's main thread
 * sat waiting for a core during the probe. On a machine at load 10–30 a process busy with
 * legitimate work gets a fraction of a core, so the wall time of its every slice stretches
 * several-fold (a 300 ms busy loop got 17 ms of CPU at load 12); what is left is the time the
 * server itself spent — its event loop busy with other work, or answering. The control is
 * corrected alike: its raw wall grows with the load, and a bound of "own time within 100 ms of
 * the control's wall" would loosen as the load rises (a control at 200 ms let a 250 ms block
 * through). The gateway's raw latency is kept beside them.
 */
export async function probePairOwnTime(
  gateway: string,
  pid: number,
  control: Control,
): Promise<[gw: number, idle: number, gwWall: number]> {
  const gw = await ownTime(`${gateway}/healthz`, pid)
  const idle = await ownTime(control.url, control.pid)
  return [gw[0], idle[0], gw[1]]
}

/** One probe of `url` as [own, wall] ms: own is wall less `pid`'s run-queue wait over the probe. */
async function ownTime(url: string, pid: number): Promise<[own: number, wall: number]> {
  const before = runQueueMs(pid)
  const wall = await probe(url)
  const after = runQueueMs(pid)
  const waited = before === null || after === null ? 0 : after - before
  return [Math.max(0, wall - waited), wall]
}

/** The `q` quantile (0–1) of `xs` (nearest rank; xs need not be sorted). */
export function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
}
