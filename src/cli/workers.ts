/**
 * @module
 * `serve --workers N`: the primary starts N-1 worker processes on the same port, keeps N running,
 * and talks to them over an IPC channel for two things: metrics, and live reload.
 *
 * Supervision: a worker that exits while the server is not stopping is logged at `error` (pid,
 * exit code or signal) and started again after a backoff: 100 ms, doubled each time the process
 * started in its place dies again within `STABLE_MS` of starting. When five restarts in a row have
 * each died that fast, the pool gives up and calls `onGiveUp` (`serve` drains and exits 1): a
 * crash loop is the operator's to see, not ours to spin on.
 *
 * Metrics: a scrape can land on any process (the kernel spreads connections), so the process that
 * gets it asks the primary, which collects a fresh snapshot from every live process and returns
 * them; the sum is the whole server's. Every snapshot a scrape uses passes through the primary,
 * which keeps the latest of each worker. When a worker exits, its gauges (open streams, circuits,
 * its 1 in `switchyard_processes`) go with it, and that latest snapshot's counters and histograms
 * are folded into `departed`, which every scrape includes: no counter a scraper has seen ever
 * goes backwards. What the worker counted after it was last collected is lost with it.
 */

import type { ReloadReport } from '../server/deps.ts'
import { emptySnapshot, foldCounters, type Metrics, type MetricsSnapshot } from '../traffic/metrics.ts'
import type { Logger } from '../util/log.ts'
import { CliError } from './errors.ts'
import { selfCommand } from './process.ts'

/** One other process's reload, as the one that was asked reports it. */
export type PeerReload = { pid: number; outcome: ReloadReport['outcome'] | 'no answer' }

type ToWorker =
  | { t: 'collect'; id: number }
  | { t: 'scraped'; id: number; snaps: MetricsSnapshot[] }
  | { t: 'reload'; id: number }
  | { t: 'reloaded-all'; id: number; peers: PeerReload[] }
/** A scrape carries the asking worker's own snapshot, so the primary's copy is never behind what it shows. */
type ToPrimary =
  | { t: 'snapshot' | 'scrape'; id: number; snap: MetricsSnapshot }
  | { t: 'reloaded'; id: number; peer: PeerReload }
  | { t: 'reload-all'; id: number }

/** A worker that does not answer within this is counted with its last snapshot. */
const COLLECT_TIMEOUT_MS = 1_000
/**
 * A process that has not reloaded within this is reported as `no answer` (a reload reads a file
 * and builds the config's parts: milliseconds; the rest is margin for a loaded machine).
 */
const RELOAD_TIMEOUT_MS = 10_000
/** A worker that ran this long was not crash-looping: the next restart waits the first delay again. */
const STABLE_MS = 10_000
/** The wait before each restart in a row of quick deaths; one more quick death after the last: give up. */
const RESTART_DELAYS_MS = [100, 200, 400, 800, 1_600]

/** One of the N-1 places the pool keeps filled, and its run of quick deaths. */
interface Slot {
  args: string[]
  /** Deaths in a row, each within STABLE_MS of its process starting (a slower one starts a new run at 1). */
  deaths: number
}

interface Worker {
  proc: ReturnType<typeof Bun.spawn<'pipe', 'pipe', 'inherit'>>
  /** Resolves when the worker listens; rejects if it exits first. */
  ready: Promise<void>
  slot: Slot
  startedAt: number
  listening: boolean
  /** Started in place of one that died (an initial worker that cannot start fails `start` instead). */
  replaces: number | null
}

export interface PoolOptions {
  log: Logger
  /** A worker keeps dying within seconds of starting: the server should stop, non-zero. Called once. */
  onGiveUp: () => void
  /** This process's own live reload (a worker got `POST /admin/v1/reload`: the primary reloads too). */
  reload: () => Promise<ReloadReport>
}

/** The primary's side: spawns workers, restarts them, and answers their scrapes. */
export class WorkerPool {
  private readonly live = new Set<Worker>()
  private readonly last = new Map<Worker, MetricsSnapshot>()
  /** Counters and histograms of the workers that have exited, as last collected. */
  private readonly departed = emptySnapshot()
  private readonly waiting = new Map<number, { from: Worker; done: (snap?: MetricsSnapshot) => void }>()
  private readonly restarts = new Set<ReturnType<typeof setTimeout>>()
  private readonly reloading = new Map<number, (peer: PeerReload) => void>()
  private stopping = false
  private nextId = 1

  constructor(
    private readonly metrics: Metrics,
    private readonly opts: PoolOptions,
  ) {
    metrics.peers = () => this.collect(null)
  }

  /** Starts `count` workers; resolves once every one listens, rejects if one exits first. */
  async start(count: number, args: string[]): Promise<void> {
    const started = Array.from({ length: count }, () => this.spawn({ args, deaths: 0 }, null))
    await Promise.all(started.map((w) => w.ready))
  }

  /** No more restarts (pending ones are cancelled); `signal` to every worker. */
  stop(signal: NodeJS.Signals): void {
    this.stopping = true
    for (const t of this.restarts) clearTimeout(t)
    this.restarts.clear()
    for (const w of this.live) w.proc.kill(signal)
  }

  /** Resolves once every worker has exited. */
  exited(): Promise<unknown> {
    return Promise.all([...this.live].map((w) => w.proc.exited))
  }

  private spawn(slot: Slot, replaces: number | null): Worker {
    let self: Worker
    const proc = Bun.spawn([...selfCommand(), ...slot.args], {
      stdout: 'pipe',
      stderr: 'inherit',
      stdin: 'pipe', // closed when the primary dies, even by SIGKILL: the worker then drains and exits
      ipc: (msg: ToPrimary) => void this.onMessage(self, msg),
      serialization: 'advanced',
    })
    const ready = (async () => {
      const reader = proc.stdout.getReader()
      const { done } = await reader.read()
      reader.releaseLock()
      if (done)
        throw new CliError(
          'worker_failed',
          `a worker exited before listening (exit code ${await proc.exited})`,
        )
    })()
    self = { proc, ready, slot, startedAt: performance.now(), listening: false, replaces }
    this.live.add(self)
    ready.then(
      () => {
        self.listening = true
        if (replaces !== null) this.opts.log.info('worker process restarted', { pid: proc.pid, replaces })
      },
      () => {}, // `start` reports an initial worker's; a restarted one's exit restarts it again
    )
    void proc.exited.then(() => this.onExit(self))
    return self
  }

  private onExit(w: Worker): void {
    this.live.delete(w)
    const snap = this.last.get(w)
    this.last.delete(w)
    if (snap) foldCounters(this.departed, snap)
    for (const p of this.waiting.values()) if (p.from === w) p.done(undefined)
    if (this.stopping || (!w.listening && w.replaces === null)) return

    const fields = { pid: w.proc.pid, exit_code: w.proc.exitCode, signal: w.proc.signalCode }
    this.restartLater(w.slot, w.proc.pid, fields, performance.now() - w.startedAt < STABLE_MS)
  }

  /** Backs off, then starts a process in `slot`; gives up after too many quick deaths in a row. */
  private restartLater(slot: Slot, replaces: number, fields: Record<string, unknown>, quick: boolean): void {
    slot.deaths = quick ? slot.deaths + 1 : 1
    const delay = RESTART_DELAYS_MS[slot.deaths - 1]
    if (delay === undefined) {
      this.opts.log.error('a worker process keeps exiting within seconds of starting; giving up', {
        ...fields,
        restarts: RESTART_DELAYS_MS.length,
        fix: 'its own lines before this one say why; the server stops (exit 1) for its service manager to see',
      })
      this.opts.onGiveUp()
      return
    }
    this.opts.log.error('a worker process exited unexpectedly; restarting it', {
      ...fields,
      restart_in_ms: delay,
    })
    const timer = setTimeout(() => {
      this.restarts.delete(timer)
      if (this.stopping) return
      try {
        this.spawn(slot, replaces)
      } catch (err) {
        // Could not even start one (out of file descriptors, say): a quick death like any other.
        this.restartLater(slot, replaces, { error: (err as Error).message }, true)
      }
    }, delay)
    this.restarts.add(timer)
  }

  /**
   * Every live worker but `except` reloads its own copy of the file; resolves with each one's
   * outcome once all have answered (or `RELOAD_TIMEOUT_MS` passed).
   */
  reloadAll(except: Worker | null = null): Promise<PeerReload[]> {
    const asked = [...this.live].filter((w) => w !== except && w.listening)
    return Promise.all(
      asked.map(
        (w) =>
          new Promise<PeerReload>((resolve) => {
            const id = this.nextId++
            const done = (peer: PeerReload) => {
              clearTimeout(timer)
              this.reloading.delete(id)
              resolve(peer)
            }
            const timer = setTimeout(() => done({ pid: w.proc.pid, outcome: 'no answer' }), RELOAD_TIMEOUT_MS)
            this.reloading.set(id, done)
            try {
              w.proc.send({ t: 'reload', id } satisfies ToWorker)
            } catch {
              done({ pid: w.proc.pid, outcome: 'no answer' }) // exiting; its replacement reads the file anew
            }
          }),
      ),
    )
  }

  /** A worker was asked to reload: this process and every other worker do too. */
  private async reloadFor(from: Worker, id: number): Promise<void> {
    const own = await this.opts.reload()
    const others = own.outcome === 'refused' ? [] : await this.reloadAll(from)
    const peers = [{ pid: process.pid, outcome: own.outcome }, ...others]
    try {
      from.proc.send({ t: 'reloaded-all', id, peers } satisfies ToWorker)
    } catch {
      // it exited meanwhile; so did the admin request's connection
    }
  }

  private async onMessage(from: Worker, msg: ToPrimary): Promise<void> {
    if (msg.t === 'reloaded') return this.reloading.get(msg.id)?.(msg.peer)
    if (msg.t === 'reload-all') return this.reloadFor(from, msg.id)
    if (!this.live.has(from)) return // sent just before it exited: its figures are in `departed`
    this.last.set(from, msg.snap)
    if (msg.t === 'snapshot') {
      this.waiting.get(msg.id)?.done(msg.snap)
      return
    }
    // A worker got a scrape: it has its own figures; send everyone else's.
    const snaps = [this.metrics.snapshot(), ...(await this.collect(from))]
    try {
      from.proc.send({ t: 'scraped', id: msg.id, snaps } satisfies ToWorker)
    } catch {
      // it exited meanwhile; so did the scrape's connection
    }
  }

  /** Fresh snapshots of every live worker but `except`, and what exited workers counted. */
  private async collect(except: Worker | null): Promise<MetricsSnapshot[]> {
    const asked = [...this.live].filter((w) => w !== except)
    const snaps = await Promise.all(asked.map((w) => this.ask(w)))
    // One that exited while we waited is in `departed` now: counted once, without its gauges.
    const live = snaps.filter((s, i): s is MetricsSnapshot => s !== undefined && this.live.has(asked[i]!))
    return [...live, this.departed]
  }

  private ask(w: Worker): Promise<MetricsSnapshot | undefined> {
    return new Promise((resolve) => {
      const id = this.nextId++
      const timer = setTimeout(() => done(this.last.get(w)), COLLECT_TIMEOUT_MS)
      const done = (snap?: MetricsSnapshot) => {
        clearTimeout(timer)
        this.waiting.delete(id)
        resolve(snap)
      }
      this.waiting.set(id, { from: w, done })
      try {
        w.proc.send({ t: 'collect', id } satisfies ToWorker)
      } catch {
        done(this.last.get(w)) // exiting: its last figures count until its exit is seen
      }
    })
  }
}

/**
 * A worker's side: answers the primary's collects and asks it for the others on a scrape; reloads
 * (`reload`, this process's own) when the primary says, and returns how to have every other
 * process reload (the primary does, then tells the rest).
 */
export function joinPool(
  metrics: Metrics,
  reload: () => Promise<ReloadReport>,
): { reloadOthers(): Promise<PeerReload[]> } {
  const waiting = new Map<number, (snaps: MetricsSnapshot[]) => void>()
  const reloading = new Map<number, (peers: PeerReload[]) => void>()
  let nextId = 1
  process.on('message', (msg: ToWorker) => {
    if (msg.t === 'collect') {
      process.send?.({ t: 'snapshot', id: msg.id, snap: metrics.snapshot() } satisfies ToPrimary)
    } else if (msg.t === 'reload') {
      void reload().then(
        (r) =>
          process.send?.({
            t: 'reloaded',
            id: msg.id,
            peer: { pid: process.pid, outcome: r.outcome },
          } satisfies ToPrimary),
        () =>
          process.send?.({
            t: 'reloaded',
            id: msg.id,
            peer: { pid: process.pid, outcome: 'refused' },
          } satisfies ToPrimary),
      )
    } else if (msg.t === 'reloaded-all') {
      reloading.get(msg.id)?.(msg.peers)
      reloading.delete(msg.id)
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
      process.send?.({ t: 'scrape', id, snap: metrics.snapshot() } satisfies ToPrimary)
    })
  return {
    reloadOthers: () =>
      new Promise((resolve) => {
        const id = nextId++
        // The primary waits RELOAD_TIMEOUT_MS at most for each worker; a primary gone answers never.
        const timer = setTimeout(() => {
          reloading.delete(id)
          resolve([])
        }, RELOAD_TIMEOUT_MS * 2)
        reloading.set(id, (peers) => {
          clearTimeout(timer)
          resolve(peers)
        })
        process.send?.({ t: 'reload-all', id } satisfies ToPrimary)
      }),
  }
}
