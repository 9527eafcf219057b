/**
 * @module
 * Circuit breakers per (key, model) — per process. After `failures` consecutive failures a circuit
 * opens: the target is skipped (requests go straight to their fallbacks) for `cooldown_s`. Then
 * exactly one request is let through as a probe (half-open); its success closes the circuit, its
 * failure opens it for another cooldown. A probe that ends neither way (the client left, the
 * request's own fault) gives the turn to the next request; so does one never settled within a
 * cooldown, so a lost probe cannot hold a circuit half-open for ever.
 *
 * "Failure" and "success" are the failure-kind table's `circuit` column: a 400 shows the target
 * is up, a 429 or a dead key is the key pool's business, not the circuit's.
 *
 * @example
 * const board = new CircuitBoard(systemClock)
 * const c = board.get({ provider: 'openai', key: 0, model: 'gpt-4o' }, { failures: 5, cooldownMs: 30_000 })
 * const turn = c.admit()        // 'pass' | 'probe' | 'skip'
 * if (turn !== 'skip') ok ? c.success() : c.failure()
 */
import type { Clock } from '../../util/clock.ts'

export interface CircuitPolicy {
  /** Consecutive failures that open the circuit. */
  failures: number
  cooldownMs: number
}

export const DEFAULT_CIRCUIT: Readonly<CircuitPolicy> = Object.freeze({ failures: 5, cooldownMs: 30_000 })

export type CircuitState = 'closed' | 'open' | 'half_open'

/** What `admit` lets an attempt do: go ahead, go ahead as the one probe, or skip this target. */
export type Turn = 'pass' | 'probe' | 'skip'

export class Circuit {
  /** Told when the circuit opens (from closed) and when it closes again (the `circuit.*` alerts). */
  onChange: ((state: 'open' | 'closed') => void) | null = null
  private failures = 0
  private openedAt = 0
  private open = false
  /** Epoch ms the probe went out; 0 when none is out. */
  private probeAt = 0

  constructor(
    readonly policy: CircuitPolicy,
    private readonly clock: Clock,
  ) {}

  /** For the gauge and the logs: `half_open` once the cooldown has passed, whether or not its probe is out. */
  state(): CircuitState {
    if (!this.open) return 'closed'
    return this.clock.now() - this.openedAt >= this.policy.cooldownMs ? 'half_open' : 'open'
  }

  /**
   * Whether an attempt may go to this target now — closed, or past the cooldown with no probe out
   * — without taking the turn. The one way to ask: `admit` takes the turn it describes, and the
   * attempt plan asks it of the other keys and the fallbacks (`state` is for the gauge only).
   */
  admits(): boolean {
    if (!this.open) return true
    const now = this.clock.now()
    if (now - this.openedAt < this.policy.cooldownMs) return false
    return this.probeAt === 0 || now - this.probeAt >= this.policy.cooldownMs
  }

  /**
   * When `admits` will say yes (epoch ms; now or earlier when it does): the cooldown's end, or, with
   * the probe out past it, when that probe's turn lapses (it usually settles long before).
   */
  admitsAt(): number {
    if (!this.open) return 0
    const reopen = this.openedAt + this.policy.cooldownMs
    if (this.clock.now() < reopen || this.probeAt === 0) return reopen
    return this.probeAt + this.policy.cooldownMs
  }

  /** Takes the turn `admits` describes: a pass while closed, the one probe when half-open. */
  admit(): Turn {
    if (!this.admits()) return 'skip'
    if (!this.open) return 'pass'
    this.probeAt = this.clock.now()
    return 'probe'
  }

  /** The target answered (or proved it is up): closed, the count reset. */
  success(): void {
    this.failures = 0
    if (this.open) this.onChange?.('closed')
    this.open = false
    this.probeAt = 0
  }

  failure(): void {
    this.failures++
    if (
      this.open ? this.probeAt !== 0 || this.state() === 'half_open' : this.failures >= this.policy.failures
    ) {
      const opened = !this.open
      this.open = true
      this.openedAt = this.clock.now()
      this.probeAt = 0
      if (opened) this.onChange?.('open')
    }
  }

  /** An attempt ended with no verdict on the target; if it was the probe, the next request probes. */
  release(): void {
    this.probeAt = 0
  }
}

export interface CircuitTarget {
  provider: string
  /** The key's position in the provider's pool. */
  key: number
  model: string
}

/** Every circuit of the process, made on first use. */
export class CircuitBoard {
  /** Told of every circuit's opening and closing (app/build.ts: the alerts). */
  onChange: ((target: CircuitTarget, state: 'open' | 'closed') => void) | null = null
  private readonly circuits = new Map<string, { target: CircuitTarget; circuit: Circuit }>()

  constructor(private readonly clock: Clock) {}

  get(target: CircuitTarget, policy: CircuitPolicy): Circuit {
    const id = `${target.provider}\u0000${target.key}\u0000${target.model}`
    let entry = this.circuits.get(id)
    if (!entry) {
      entry = { target: { ...target }, circuit: new Circuit(policy, this.clock) }
      const t = entry.target
      entry.circuit.onChange = (state) => this.onChange?.(t, state)
      this.circuits.set(id, entry)
    }
    return entry.circuit
  }

  /**
   * A live reload: the circuits of `from` whose provider `keep` says is configured as before,
   * reported from now on to this board's `onChange` (the requests still running on `from` share them).
   * The others start afresh, closed: those that were not are returned (their `circuit.closed`, the
   * caller's to send once this board's alerts are wired), and go silent — a request still running
   * on `from` may yet fail or probe on one, but it is no longer the provider's circuit.
   */
  adopt(from: CircuitBoard, keep: (provider: string) => boolean): CircuitTarget[] {
    const reset: CircuitTarget[] = []
    for (const [id, entry] of from.circuits) {
      if (!keep(entry.target.provider)) {
        if (entry.circuit.state() !== 'closed') reset.push(entry.target)
        entry.circuit.onChange = null
        continue
      }
      const t = entry.target
      entry.circuit.onChange = (state) => this.onChange?.(t, state)
      this.circuits.set(id, entry)
    }
    return reset
  }

  /** For the circuit-state gauge: every circuit used so far and its state now. */
  states(): Array<CircuitTarget & { state: CircuitState }> {
    return [...this.circuits.values()].map(({ target, circuit }) => ({ ...target, state: circuit.state() }))
  }
}
