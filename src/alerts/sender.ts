/**
 * @module
 * Sends the queued deliveries: a timer of the serving process claims the due rows (a lease, so
 * every worker and replica may run one: each row goes to one of them at a time), POSTs each,
 * signed, and records the answer. A 2xx delivers it; anything else — another status, a refused
 * connection, no answer within {@link SEND_TIMEOUT_MS} — schedules the next try after a doubling
 * backoff with jitter, until `alerts.give_up_after_s` after the event (then `failed`). Nothing
 * here runs on a request: a receiver that is down costs requests nothing.
 */
import type { AlertsConfig, WebhookConfig } from '../config/index.ts'
import type { AlertStore, Delivery } from '../store/index.ts'
import type { Clock } from '../util/clock.ts'
import type { Logger } from '../util/log.ts'
import { bodyFor } from './events.ts'
import { SIGNATURE_HEADER, signatureHeader } from './signature.ts'

/** One try's bound: the whole exchange, headers and body. */
export const SEND_TIMEOUT_MS = 10_000
/** A claimed row is another sender's again after this (its sender died mid-send). */
const LEASE_MS = 60_000
/** Rows claimed per turn. */
const CLAIM = 50

/** The wait before try `attempts + 1`: backoff × 2^(attempts − 1), at most `max`, ± 20 %. */
export function nextDelay(cfg: Pick<AlertsConfig, 'backoffMs' | 'maxBackoffMs'>, attempts: number): number {
  const base = Math.min(cfg.maxBackoffMs, cfg.backoffMs * 2 ** Math.min(30, Math.max(0, attempts - 1)))
  return Math.round(base * (0.8 + Math.random() * 0.4))
}

/**
 * One signed POST of a stored event document to `hook`: the answer's status, and why it does not
 * count as delivered (null when it is a 2xx).
 */
export async function postAlert(
  hook: WebhookConfig,
  d: Pick<Delivery, 'event' | 'eventId' | 'body'>,
  unixSeconds: number,
  signal: AbortSignal,
): Promise<{ status: number | null; error: string | null }> {
  try {
    const body = bodyFor(hook.format, d.body)
    const res = await fetch(hook.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'switchyard-alerts',
        'x-switchyard-event': d.event,
        'x-switchyard-event-id': d.eventId,
        [SIGNATURE_HEADER]: signatureHeader(hook.secret, unixSeconds, body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.any([AbortSignal.timeout(SEND_TIMEOUT_MS), signal]),
    })
    await res.body?.cancel().catch(() => {})
    return {
      status: res.status,
      error: res.status >= 200 && res.status <= 299 ? null : `answered ${res.status}`,
    }
  } catch (err) {
    return { status: null, error: (err as Error).message.slice(0, 300) }
  }
}

export class AlertSender {
  private readonly byUrl = new Map<string, WebhookConfig>()
  private timer: ReturnType<typeof setInterval> | null = null
  private turn: Promise<void> | null = null
  private readonly stopping = new AbortController()

  constructor(
    private readonly config: AlertsConfig,
    private readonly store: AlertStore,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    for (const w of config.webhooks) if (!this.byUrl.has(w.url)) this.byUrl.set(w.url, w)
  }

  start(): void {
    if (this.timer || !this.config.webhooks.length) return
    this.timer = setInterval(() => void this.tick(), this.config.pollMs)
    this.timer.unref?.()
    void this.tick()
  }

  /** One turn: claims what is due and sends it; a turn still running is not overlapped. */
  tick(): Promise<void> {
    this.turn ??= this.sendDue().finally(() => {
      this.turn = null
    })
    return this.turn
  }

  private async sendDue(): Promise<void> {
    let due: Delivery[]
    try {
      due = await this.store.claimDeliveries(this.clock.now(), LEASE_MS, CLAIM)
    } catch (err) {
      this.log.warn('alert deliveries not read', { error: (err as Error).message })
      return
    }
    await Promise.all(due.map((d) => this.send(d)))
  }

  private async send(d: Delivery): Promise<void> {
    const hook = this.byUrl.get(d.url)
    const attempts = d.attempts + 1
    const { status, error } = hook
      ? await postAlert(hook, d, Math.floor(this.clock.now() / 1000), this.stopping.signal)
      : { status: null, error: 'no webhook with this URL is configured any more' }
    const now = this.clock.now()
    const delivered = error === null
    const giveUp = !delivered && (!hook || now - d.createdAt >= this.config.giveUpAfterMs)
    const state = delivered ? 'delivered' : giveUp ? 'failed' : 'pending'
    if (giveUp) this.log.error('alert given up', { event: d.event, event_id: d.eventId, attempts, error })
    try {
      await this.store.deliveryTried(d.id, {
        state,
        status,
        error,
        nextAt: state === 'pending' ? now + nextDelay(this.config, attempts) : now,
        now,
      })
    } catch (err) {
      // The lease ends and the row is tried again: at least once, the id deduplicates.
      this.log.warn('alert delivery not recorded', { event_id: d.eventId, error: (err as Error).message })
    }
  }

  /**
   * Stops the timer: no more rows are claimed. `finish` (a reload's old sender): the sends under way
   * run to their answer — each bounded by {@link SEND_TIMEOUT_MS} — and are recorded, while the new
   * sender cannot claim their leased rows: each is sent once; a graceful stop of the process (its
   * drain) finishes every sender so. Without it (a stop that is not graceful) they are cut, and
   * their rows are due again when the lease ends: a receiver that had read one gets it twice,
   * under one id.
   */
  async stop(opts: { finish?: boolean } = {}): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    if (!opts.finish) this.stopping.abort()
    await this.turn
  }
}
