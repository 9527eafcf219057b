/**
 * @module
 * `serve --workers N`: the primary starts N-1 worker processes on the same port and talks to them
 * over an IPC channel, for one thing only — metrics. A scrape can land on any process (the kernel
 * spreads connections), so the process that gets it asks the primary, which collects a fresh
 * snapshot from every process and returns them; the sum is the whole server's, and since every
 * process's counters only grow, no scraped counter ever goes backwards.
 */
import type { Metrics, MetricsSnapshot } from '../traffic/metrics.ts'
import { selfCommand } from './process.ts'

type ToWorker = { t: 'collect'; id: number } | { t: 'scraped'; id: number; snaps: MetricsSnapshot[] }
type ToPrimary = { t: 'snapshot'; id: number; snap: MetricsSnapshot } | { t: 'scrape'; id: number }

/** A worker that does not answer within this is counted with its last snapshot. */
const COLLECT_TIMEOUT_MS = 1_000

export interface WorkerProcess {
  proc: ReturnType<typeof Bun.spawn<'pipe', 'pipe', 'inherit'>>
  /** Resolves when the worker listens; rejects if it exits first. */
  ready: Promise<void>
}

/** The primary's side: spawns workers and answers their scrapes. */
export class WorkerPool {
  readonly workers: WorkerProcess[] = []
  private readonly last = new Map<WorkerProcess, MetricsSnapshot>()
  private readonly waiting = new Map<number, (snap: MetricsSnapshot) => void>()
  private nextId = 1

  constructor(private readonly metrics: Metrics) {
    metrics.peers = () => this.collect(null)
  }

  spawn(args: string[]): WorkerProcess {
    let self: WorkerProcess
    const proc = Bun.spawn([...selfCommand(), ...args], {
      stdout: 'pipe',
      stderr: 'inherit',
      stdin: 'pipe',
      ipc: (msg: ToPrimary) => void this.onMessage(self, msg),
      serialization: 'advanced',
    })
    const ready = (async () => {
      const reader = proc.stdout.getReader()
      const { done } = await reader.read()
      reader.releaseLock()
      if (done) throw new Error(`a worker exited before listening (exit code ${await proc.exited})`)
    })()
    self = { proc, ready }
    this.workers.push(self)
    return self
  }

  kill(signal: NodeJS.Signals): void {
    for (const w of this.workers) w.proc.kill(signal)
  }

  exited(): Promise<unknown> {
    return Promise.all(this.workers.map((w) => w.proc.exited))
  }

  private async onMessage(from: WorkerProcess, msg: ToPrimary): Promise<void> {
    if (msg.t === 'snapshot') {
      this.last.set(from, msg.snap)
      this.waiting.get(msg.id)?.(msg.snap)
      return
    }
    // A worker got a scrape: it has its own figures; send everyone else's.
    const snaps = [this.metrics.snapshot(), ...(await this.collect(from))]
    from.proc.send({ t: 'scraped', id: msg.id, snaps } satisfies ToWorker)
  }

  /** Fresh snapshots of every worker but `except`. */
  private collect(except: WorkerProcess | null): Promise<MetricsSnapshot[]> {
    return Promise.all(
      this.workers
        .filter((w) => w !== except)
        .map(
          (w) =>
            new Promise<MetricsSnapshot | undefined>((resolve) => {
              const id = this.nextId++
              const timer = setTimeout(() => done(this.last.get(w)), COLLECT_TIMEOUT_MS)
              const done = (snap: MetricsSnapshot | undefined) => {
                clearTimeout(timer)
                this.waiting.delete(id)
                resolve(snap)
              }
              this.waiting.set(id, done)
              try {
                w.proc.send({ t: 'collect', id } satisfies ToWorker)
              } catch {
                done(this.last.get(w)) // exited: its last figures still count
              }
            }),
        ),
    ).then((all) => all.filter((s): s is MetricsSnapshot => s !== undefined))
  }
}

/** A worker's side: answers the primary's collects and asks it for the others on a scrape. */
export function joinPool(metrics: Metrics): void {
  const waiting = new Map<number, (snaps: MetricsSnapshot[]) => void>()
  let nextId = 1
  process.on('message', (msg: ToWorker) => {
    if (msg.t === 'collect') {
      process.send?.({ t: 'snapshot', id: msg.id, snap: metrics.snapshot() } satisfies ToPrimary)
    } else {
      waiting.get(msg.id)?.(msg.snaps)
      waiting.delete(msg.id)
    }
  })
  metrics.peers = () =>
    new Promise((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(() => {
        waiting.delete(id)
        reject(new Error('the primary process did not answer the metrics scrape'))
      }, COLLECT_TIMEOUT_MS * 2)
      waiting.set(id, (snaps) => {
        clearTimeout(timer)
        resolve(snaps)
      })
      process.send?.({ t: 'scrape', id } satisfies ToPrimary)
    })
}
