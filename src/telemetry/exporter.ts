/**
 * @module
 * Batches finished spans and POSTs them to the collector, off the request path: `add` only
 * appends to a bounded queue ({@link MAX_QUEUE} spans, OpenTelemetry's default); a timer sends
 * them every `intervalMs`, or as soon as a batch of {@link MAX_BATCH} is ready. A collector that
 * is down, slow or refusing costs requests nothing: an export that fails is dropped (not retried,
 * so the queue cannot pile up behind it), and past the bound new spans are dropped; both are
 * counted (`dropped`) and logged at most once a minute.
 */
import type { OtlpProtocol } from '../config/index.ts'
import type { Logger } from '../util/log.ts'
import { type Resource, spanJson, wrapJson } from './otlp-json.ts'
import { SpanBatch } from './otlp-proto.ts'
import type { SpanRecord } from './span.ts'

export const MAX_QUEUE = 2048
export const MAX_BATCH = 512
/** One export's bound. */
const EXPORT_TIMEOUT_MS = 10_000
const LOG_EVERY_MS = 60_000

export interface ExporterOptions {
  url: string
  headers: Record<string, string>
  protocol: OtlpProtocol
  intervalMs: number
  resource: Resource
  log: Logger
}

export class SpanExporter {
  /**
   * The batch being filled: the finished spans themselves, encoded all at once when the batch is
   * sealed (the timer's turn, or an immediate one when the batch is full), never on a request's
   * turn: a request pays a push. The encoder then runs over up to 512 spans in a row, warm, not
   * once between each request's other work; the spans kept until then are small (three objects
   * each, {@link MAX_QUEUE} at most).
   */
  private spans: SpanRecord[] = []
  private readonly proto: SpanBatch
  private readonly batches: Array<{ body: Uint8Array | string; spans: number }> = []
  private queued = 0
  private timer: ReturnType<typeof setTimeout> | null = null
  private immediate = false
  private sending: Promise<void> | null = null
  /** Spans dropped: the queue full, or their export failed. */
  dropped = 0
  exported = 0
  private loggedAt = 0
  private droppedLogged = 0

  constructor(private readonly opts: ExporterOptions) {
    this.proto = new SpanBatch(opts.resource)
  }

  add(span: SpanRecord): void {
    if (this.queued >= MAX_QUEUE) {
      this.dropped++
      return
    }
    this.queued++
    if (this.spans.push(span) >= MAX_BATCH) {
      if (!this.immediate) {
        this.immediate = true
        setImmediate(() => {
          this.immediate = false
          void this.flush()
        })
      }
    } else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.opts.intervalMs)
      this.timer.unref?.()
    }
  }

  /**
   * Encodes the spans waiting into export requests' bodies, a batch of at most {@link MAX_BATCH}
   * each. A batch the encoder throws on (a NaN time, say) is dropped as a failed export is: its
   * spans counted in `dropped` and their places in the queue given back, the protobuf writer's
   * half-written span discarded (or it would begin the next body), and the error logged. It runs
   * on the export's timer: a throw out of here would be an uncaught exception there.
   */
  private seal(): void {
    const { spans } = this
    if (!spans.length) return
    this.spans = []
    const { resource } = this.opts
    for (let at = 0; at < spans.length; at += MAX_BATCH) {
      const end = Math.min(spans.length, at + MAX_BATCH)
      let body: Uint8Array | string
      try {
        if (this.opts.protocol === 'http/json') {
          const json: string[] = []
          for (let i = at; i < end; i++) json.push(spanJson(spans[i]!))
          body = wrapJson(json, resource)
        } else {
          for (let i = at; i < end; i++) this.proto.add(spans[i]!)
          body = this.proto.seal()
        }
      } catch (err) {
        this.proto.discard()
        this.queued -= end - at
        this.dropped += end - at
        this.report(`the spans could not be encoded: ${(err as Error)?.message ?? String(err)}`)
        continue
      }
      this.batches.push({ body, spans: end - at })
    }
  }

  /** Sends everything queued, a batch at a time; resolves when the exports are answered or failed. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.seal()
    // While an export is in flight its loop takes the batches sealed meanwhile; this flush then
    // ends after it, with a look again for any batch sealed as that loop ended.
    if (this.sending) return this.sending.then(() => this.flush())
    if (!this.batches.length) return Promise.resolve()
    // Cleared in a callback, which always runs after this assignment. (Cleared inside the sending
    // function, a flush with nothing to send cleared it before it was set, and the promise left
    // behind, resolved and never cleared, stopped every later export: the queue filled, and every
    // span after it was dropped.)
    this.sending = this.drain().finally(() => {
      this.sending = null
    })
    return this.sending
  }

  private async drain(): Promise<void> {
    for (let b = this.batches.shift(); b; b = this.batches.shift()) {
      await this.send(b.body, b.spans)
      this.queued -= b.spans
    }
  }

  private async send(body: Uint8Array | string, spans: number): Promise<void> {
    const json = typeof body === 'string'
    try {
      const res = await fetch(this.opts.url, {
        method: 'POST',
        headers: {
          ...this.opts.headers,
          'content-type': json ? 'application/json' : 'application/x-protobuf',
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS),
      })
      await res.body?.cancel().catch(() => {})
      if (!res.ok) throw new Error(`the collector answered ${res.status}`)
      this.exported += spans
    } catch (err) {
      this.dropped += spans
      this.report((err as Error).message)
    }
  }

  private report(error: string): void {
    const now = Date.now()
    if (now - this.loggedAt < LOG_EVERY_MS) return
    this.loggedAt = now
    this.opts.log.warn('spans not exported', {
      error,
      dropped: this.dropped - this.droppedLogged,
      dropped_total: this.dropped,
    })
    this.droppedLogged = this.dropped
  }
}
