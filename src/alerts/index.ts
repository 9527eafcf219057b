/**
 * @module
 * Alerts (DESIGN §15): events → a queue of signed webhook deliveries in the store → a sender in
 * the serving process. `AlertService` is what the app builds once and starts with `serve`.
 */
import type { Config } from '../config/index.ts'
import type { CircuitTarget } from '../providers/resilience/circuit.ts'
import type { Store } from '../store/index.ts'
import type { Clock } from '../util/clock.ts'
import type { Logger } from '../util/log.ts'
import { Alerts } from './alerts.ts'
import { EXPIRING_EVERY_MS, planExpiring } from './expiring.ts'
import { AlertSender } from './sender.ts'
import { REFRESH_MS, ThresholdWatch } from './thresholds.ts'

export { Alerts } from './alerts.ts'
export { alertDocument, alertText, bodyFor } from './events.ts'
export { postAlert } from './sender.ts'
export { SIGNATURE_HEADER, signatureHeader } from './signature.ts'

export class AlertService {
  readonly alerts: Alerts
  readonly sender: AlertSender
  readonly thresholds: ThresholdWatch
  private expiringTimer: ReturnType<typeof setInterval> | null = null
  private sweepTimer: ReturnType<typeof setInterval> | null = null

  constructor(private readonly deps: { store: Store; config: Config; clock: Clock; log: Logger }) {
    const { store, config, clock, log } = deps
    this.alerts = new Alerts(config.alerts, store, clock, log)
    this.sender = new AlertSender(config.alerts, store, clock, log)
    this.thresholds = new ThresholdWatch(deps, this.alerts)
  }

  /**
   * A circuit changed state (providers/resilience/circuit.ts): `circuit.opened` / `circuit.closed`.
   * `reason` `reload`: closed because a live reload changed its provider's settings (or removed it)
   * and the circuit started afresh, not because a probe succeeded.
   */
  circuitChanged(target: CircuitTarget, state: 'open' | 'closed', reason?: 'reload'): void {
    const event = state === 'closed' ? 'circuit.closed' : 'circuit.opened'
    if (!this.alerts.wants(event)) return
    this.alerts.emit(event, {
      provider: target.provider,
      key: `#${target.key}`,
      model: `${target.provider}/${target.model}`,
      ...(reason ? { reason } : {}),
      pid: process.pid,
    })
  }

  /** A key was suspended for its refusals, until `until` (epoch ms). */
  keySuspended(keyId: string, until: number): void {
    if (!this.alerts.wants('key.suspended')) return
    this.alerts.emit(
      'key.suspended',
      { key_id: keyId, until: new Date(until).toISOString() },
      `key.suspended:${keyId}:${until}`,
    )
  }

  /** Serving: the sender and the hourly `plan.expiring` look. */
  start(): void {
    if (!this.deps.config.alerts.webhooks.length) return
    this.sender.start()
    const expiring = () =>
      planExpiring(this.deps.store, this.alerts, this.deps.clock.now()).catch((err) =>
        this.deps.log.warn('plan expiry alerts not checked', { error: (err as Error).message }),
      )
    void expiring()
    this.expiringTimer = setInterval(expiring, EXPIRING_EVERY_MS)
    this.expiringTimer.unref?.()
    if (this.thresholds.active) {
      const now = () => this.deps.clock.now()
      this.sweepTimer = setInterval(() => void this.thresholds.sweep(now), REFRESH_MS)
      this.sweepTimer.unref?.()
    }
  }

  /** `finish`: the sends under way are answered first (`AlertSender.stop`): a reload's old generation. */
  async stop(opts: { finish?: boolean } = {}): Promise<void> {
    if (this.expiringTimer) clearInterval(this.expiringTimer)
    if (this.sweepTimer) clearInterval(this.sweepTimer)
    this.expiringTimer = null
    this.sweepTimer = null
    await this.sender.stop(opts)
    await this.alerts.close()
  }
}
