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
import { encodeJson, type Resource } from './otlp-json.ts'
import { encodeProto } from './otlp-proto.ts'
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
  private queue: SpanRecord[] = []
  private timer: ReturnType<typeof setTimeout> | null = null
  private sending: Promise<void> | null = null
  /** Spans dropped: the queue full, or their export failed. */
  dropped = 0
  exported = 0
  private loggedAt = 0
  private droppedLogged = 0

  constructor(private readonly opts: ExporterOptions) {}

  add(span: SpanRecord): void {
    if (this.queue.length >= MAX_QUEUE) {
      this.dropped++
      return
    }
    this.queue.push(span)
    if (this.queue.length >= MAX_BATCH && !this.sending) void this.flush()
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.opts.intervalMs)
      this.timer.unref?.()
    }
  }

  /** Sends everything queued, a batch at a time; resolves when the exports are answered or failed. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.sending ??= (async () => {
      try {
        while (this.queue.length) await this.send(this.queue.splice(0, MAX_BATCH))
      } finally {
        this.sending = null
      }
    })()
    return this.sending
  }

  private async send(batch: SpanRecord[]): Promise<void> {
    const { protocol, resource } = this.opts
    const json = protocol === 'http/json'
    try {
      const res = await fetch(this.opts.url, {
        method: 'POST',
        headers: {
          ...this.opts.headers,
          'content-type': json ? 'application/json' : 'application/x-protobuf',
        },
        body: json ? encodeJson(batch, resource) : encodeProto(batch, resource),
        redirect: 'manual',
        signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS),
      })
      await res.body?.cancel().catch(() => {})
      if (!res.ok) throw new Error(`the collector answered ${res.status}`)
      this.exported += batch.length
    } catch (err) {
      this.dropped += batch.length
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
