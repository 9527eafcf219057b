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
import { BUN } from './cli.ts'

export interface Control {
  url: string
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
  return { url: `http://127.0.0.1:${Number(text.trim())}`, stop: () => proc.kill('SIGKILL') }
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

/** The `q` quantile (0–1) of `xs` (nearest rank; xs need not be sorted). */
export function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
}
