/**
 * @module
 * Where events become queued deliveries, never on the request path: `emit` is synchronous and
 * allocation-free when no webhook subscribes to the event; otherwise it appends to a bounded
 * buffer written to the store's queue on a later turn. A store that refuses the write keeps the
 * buffer for the next try; past the bound the newest events are dropped and counted (logged).
 *
 * @example
 * alerts.emit('circuit.opened', { provider: 'openai', key: 0, model: 'gpt-4o' })
 * alerts.emit('budget.threshold', { ... }, 'budget:account:7:month:1767225600000:80')
 */
import type { AlertEvent, AlertsConfig } from '../config/index.ts'
import type { AlertStore } from '../store/index.ts'
import type { Clock } from '../util/clock.ts'
import type { Logger } from '../util/log.ts'
import { addBounded } from '../util/map.ts'
import { type AlertDocument, alertDocument } from './events.ts'

/** Events held for the store at most; beyond it new ones are dropped (logged once per write). */
const MAX_BUFFER = 10_000
/** The pause before writing the buffer again after the store refused it. */
const RETRY_MS = 1_000
/** Marks this process remembers having queued; past it the memory starts again (the store still refuses a repeat). */
const MAX_MARKS = 100_000

interface Pending {
  doc: AlertDocument
  urls: string[]
  mark: string | null
}

export class Alerts {
  /** Event → the URLs of the webhooks subscribed to it. */
  private readonly subscribers = new Map<string, string[]>()
  private buffer: Pending[] = []
  private dropped = 0
  /**
   * Marks this process has queued. A threshold stays crossed for the rest of its period and every
   * usage flush that charges the account finds it again: without this, each flush queued it anew
   * and the store spent a write transaction (SQLite: under the file's write lock) refusing it.
   */
  private readonly marked = new Set<string>()
  private timer: ReturnType<typeof setTimeout> | null = null
  private writing: Promise<void> = Promise.resolve()

  constructor(
    readonly config: AlertsConfig,
    private readonly store: AlertStore,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    for (const w of config.webhooks)
      for (const e of w.events) this.subscribers.set(e, [...(this.subscribers.get(e) ?? []), w.url])
  }

  /** Whether any webhook takes `event` (callers skip building its data when none does). */
  wants(event: AlertEvent): boolean {
    return this.subscribers.has(event)
  }

  /**
   * Queues `event` for its webhooks. `mark`: once-only (the store refuses a second alert with the
   * same mark, across processes and restarts).
   */
  emit(event: AlertEvent, data: Record<string, unknown>, mark: string | null = null): void {
    const urls = event === 'alert.test' ? this.config.webhooks.map((w) => w.url) : this.subscribers.get(event)
    if (!urls?.length) return
    if (mark !== null && this.marked.has(mark)) return
    if (this.buffer.length >= MAX_BUFFER) {
      this.dropped++
      return
    }
    if (mark !== null) addBounded(this.marked, mark, MAX_MARKS)
    this.buffer.push({ doc: alertDocument(event, data, this.clock.now()), urls, mark })
    this.timer ??= setTimeout(() => void this.flush(), 0)
  }

  /** Writes what is buffered; resolves when it is in the store or put back. Returns the events written. */
  flush(): Promise<void> {
    const next = this.writing.then(() => this.write())
    this.writing = next
    return next
  }

  private async write(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    const batch = this.buffer
    this.buffer = []
    if (this.dropped) {
      this.log.error('alerts dropped', {
        events: this.dropped,
        why: `more than ${MAX_BUFFER} waiting for the store`,
      })
      this.dropped = 0
    }
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i]!
      try {
        await this.store.enqueueAlert({
          eventId: p.doc.id,
          event: p.doc.type,
          body: JSON.stringify(p.doc),
          urls: p.urls,
          now: this.clock.now(),
          mark: p.mark,
        })
      } catch (err) {
        this.log.warn('alert not queued yet', { error: (err as Error).message, events: batch.length - i })
        this.buffer = batch.slice(i).concat(this.buffer)
        this.timer ??= setTimeout(() => void this.flush(), RETRY_MS)
        this.timer.unref?.()
        return
      }
    }
  }

  close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    return this.buffer.length ? this.flush() : this.writing
  }
}
