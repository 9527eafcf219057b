/**
 * @module
 * Holds many slow streams open at once (the mock sends one event per second), to measure the
 * gateway's memory per open stream. Opens them in batches, prints `READY {...}` once every
 * stream has its first byte (or the open timeout passed), holds them for `holdS`, then aborts
 * them all — which must cancel the upstream requests too. Runs as its own process.
 */
import { join } from 'node:path'
import { runChild } from './processes.ts'
import { emitResult, type Target } from './workload.ts'

interface Args {
  target: Target
  count: number
  openTimeoutS: number
  holdS: number
}

export interface OpenStreamsResult {
  requested: number
  /** Streams whose first body byte arrived before the open timeout. */
  open: number
  /** Seconds until the last of them opened (or the timeout). */
  openSeconds: number
  /** Events received while held, over all streams. */
  chunks: number
  errors: Record<string, number>
}

export function runOpenStreams(
  target: Target,
  count: number,
  openTimeoutS: number,
  holdS: number,
  onReady: (open: number) => void,
): Promise<OpenStreamsResult> {
  const args: Args = { target, count, openTimeoutS, holdS }
  return runChild<OpenStreamsResult>(
    join(import.meta.dir, 'open-streams.ts'),
    args,
    (openTimeoutS + holdS + 60) * 1000,
    (line) => {
      if (line.startsWith('READY ')) onReady((JSON.parse(line.slice(6)) as { open: number }).open)
    },
  )
}

async function main(a: Args): Promise<void> {
  const abort = new AbortController()
  const errors: Record<string, number> = {}
  let open = 0
  let chunks = 0
  let allOpen: () => void = () => {}
  const everyOpen = new Promise<void>((resolve) => {
    allOpen = resolve
  })
  const init = { method: 'POST', headers: a.target.headers, body: a.target.body, signal: abort.signal }
  const one = async () => {
    try {
      const res = await fetch(a.target.url, init)
      if (res.status !== 200) {
        errors[`status_${res.status}`] = (errors[`status_${res.status}`] ?? 0) + 1
        return
      }
      const reader = res.body!.getReader()
      if ((await reader.read()).done) return
      if (++open === a.count) allOpen()
      while (!(await reader.read()).done) chunks++
    } catch (err) {
      if (!abort.signal.aborted)
        errors[`network_${(err as Error).name}`] = (errors[`network_${(err as Error).name}`] ?? 0) + 1
    }
  }
  const t0 = performance.now()
  const all: Promise<void>[] = []
  for (let i = 0; i < a.count; i += 100) {
    for (let j = i; j < Math.min(a.count, i + 100); j++) all.push(one())
    await Bun.sleep(20) // batches of 100, so the listen backlog never overflows
  }
  await Promise.race([everyOpen, Bun.sleep(a.openTimeoutS * 1000)])
  const openSeconds = (performance.now() - t0) / 1000
  const openAtReady = open
  process.stdout.write(`READY ${JSON.stringify({ open })}\n`)
  chunks = 0
  await Bun.sleep(a.holdS * 1000)
  const held = chunks
  abort.abort()
  await Promise.race([Promise.all(all), Bun.sleep(5000)])
  emitResult({
    requested: a.count,
    open: openAtReady,
    openSeconds,
    chunks: held,
    errors,
  } satisfies OpenStreamsResult)
}

if (import.meta.main) await main(JSON.parse(process.argv[2]!) as Args)
