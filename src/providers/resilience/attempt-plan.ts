/**
 * @module
 * One request's way through its targets (DESIGN §10), framework-free: which (provider, key,
 * model) to try next and after what wait, given how the last attempt ended. The call step runs
 * it — `next()`, make the attempt, `settle()` — and never decides a retry itself; the failure
 * kind's row of `ACTIONS` does. The primary comes first, then its `fallbacks` in order, each
 * only if the request fits it (the caller's feature check) and its circuit lets it.
 *
 * Bounds, so no request loops: each target gets one try plus `retry.attempts` retries, each key
 * at most once per target unless the loop is waiting out that key's own `retry-after`; a silent
 * or slow target is never tried again for the request; waits never pass `max_retry_after_s`.
 *
 * The targets are the caller's: the primary and those fallbacks the request fits (features,
 * surface), in order.
 *
 * @example
 * const plan = new AttemptPlan(targets, { board, clock })
 * for (let step = plan.next(); !('stop' in step); step = plan.next()) {
 *   if ('wait' in step) { await sleep(step.wait); continue }
 *   const outcome = await tryOnce(step.attempt)       // with step.attempt.key.apiKey
 *   if (outcome.ok) { plan.succeeded(); break }
 *   plan.failed(outcome.kind, outcome.retryAfterMs)
 * }
 */
import type { ModelConfig, ProviderConfig } from '../../config/schema.ts'
import type { SessionHash } from '../../util/affinity.ts'
import type { Clock } from '../../util/clock.ts'
import type { Circuit, CircuitBoard, CircuitPolicy } from './circuit.ts'
import { ACTIONS, type Action, type FailureKind } from './failure-kinds.ts'
import type { ModelKeys, PoolKey } from './key-pool.ts'
import { backoffMs, type RetryPolicy, waitsFor } from './retry-wait.ts'

/** A configured model as the attempt loop tries it: one per model, shared by its requests (Resilience.target). */
export interface Target {
  /** `prefix/name`, as clients and logs name it. */
  readonly id: string
  readonly provider: ProviderConfig
  readonly model: ModelConfig
  /** Its provider's keys as this model sees them (a 429 rests a key for this model only). */
  readonly pool: ModelKeys
  readonly retry: RetryPolicy
  readonly circuit: CircuitPolicy
}

export interface Attempt {
  target: Target
  key: PoolKey
  /** This attempt is its circuit's one half-open probe. */
  probe: boolean
  /** 1-based count of attempts for the request, this one included. */
  n: number
}

export type Step =
  | { attempt: Attempt }
  /** Sleep this long, then ask again. */
  | { wait: number }
  /** `final`: the last failure is the answer (the request's own fault, a refusal). `exhausted`: no target left. */
  | { stop: 'final' | 'exhausted' }

export interface PlanDeps {
  board: CircuitBoard
  clock: Clock
  random?: () => number
  /** The request's agent session (its id's hash): its pool keys are the session's (util/affinity.ts). */
  session?: SessionHash | null
}

/**
 * The empty set every plan starts with, shared: the first member added makes a set of the plan's
 * own (`added`). Most requests never add one (two sets a request fewer).
 */
const NONE: ReadonlySet<number> = new Set()

/** `set` with `n` in it: `set` itself, or a new set in place of `NONE`. */
function added(set: ReadonlySet<number>, n: number): ReadonlySet<number> {
  return (set === NONE ? new Set<number>() : (set as Set<number>)).add(n)
}

/**
 * Whether a failure whose row says `failover` may go from `from` to the fallback `to`: to one with a
 * larger context window (`larger_context`), of another provider kind (`other_kind`), or any (`never`
 * is the callers' to stop first).
 */
function failsOverTo(failover: Action['failover'], from: Target, to: Target): boolean {
  if (failover === 'larger_context') return to.model.context_window > from.model.context_window
  if (failover === 'other_kind') return to.provider.kind !== from.provider.kind
  return true
}

export class AttemptPlan {
  private t = 0
  /** Retries spent on the current target. */
  private retries = 0
  /** Keys of the current target tried since its last retry began. */
  private tried: ReadonlySet<number> = NONE
  /** Targets not to be tried again for this request (silent, slow, too small a window, continued on). */
  private skipped: ReadonlySet<number> = NONE
  private current: { attempt: Attempt; circuit: Circuit } | null = null
  private last: Attempt | null = null
  private pendingWait = 0
  /** The key whose own `retry-after` the loop is waiting out: tried first when the wait ends. */
  private pinned: number | null = null
  private stopped: 'final' | null = null
  private switched = false
  private count = 0
  private readonly random: () => number

  constructor(
    private readonly targets: readonly Target[],
    private readonly deps: PlanDeps,
  ) {
    this.random = deps.random ?? Math.random
  }

  /** Attempts made so far (the `x-switchyard-attempts` header). */
  get attempts(): number {
    return this.count
  }

  /** The target of the latest attempt: after a success, the one that answered. */
  get target(): Target | null {
    return (this.current?.attempt ?? this.last)?.target ?? null
  }

  next(): Step {
    if (this.current !== null) throw new Error('settle the previous attempt first')
    if (this.stopped) return { stop: this.stopped }
    if (this.pendingWait > 0) {
      const wait = this.pendingWait
      this.pendingWait = 0
      return { wait }
    }
    for (; this.t < this.targets.length; this.moveOn()) {
      if (this.skipped.has(this.t)) continue
      const target = this.targets[this.t]!
      const started = this.tryKeys(target)
      if (started) return started
      // Every key this request has not tried rests: wait for the first rate-limited one to wake, if
      // that is soon (a key resting on a cooldown is dead for now: fail over instead).
      const wake = target.pool.nextWake(this.tried)
      const ms = wake === null ? null : wake - this.deps.clock.now()
      if (ms !== null && waitsFor(ms, target.retry) && this.retries < target.retry.attempts) {
        this.retries++
        return { wait: ms }
      }
    }
    return { stop: 'exhausted' }
  }

  succeeded(): void {
    this.take().circuit.success()
  }

  /**
   * A stream's attempt reached the client: the request is answered, and the plan may go on to a
   * continuation, but the target's verdict waits for the stream's end. Returns the verdict, to be
   * given once: null when the stream ended well (or the client left it: the target was answering),
   * else the kind of its failure after content (a cut, a stall, an in-band error), which counts
   * against the circuit and the key as the same failure before content would (DESIGN §10).
   */
  streaming(): (failure: FailureKind | null) => void {
    const { attempt, circuit } = this.take()
    return (failure) => {
      if (failure === null) circuit.success()
      else this.blame(attempt, circuit, failure, null)
    }
  }

  /** The attempt ended with no verdict on the target (the client left): frees a probe's turn. */
  abandoned(): void {
    this.take().circuit.release()
  }

  /**
   * The attempt failed with `kind` before the client saw anything; `retryAfterMs` is the
   * upstream's `retry-after` when it sent one. Decides the next step as `ACTIONS[kind]` says.
   */
  failed(kind: FailureKind, retryAfterMs: number | null = null): void {
    const { attempt, circuit } = this.take()
    const action = ACTIONS[kind]
    const { target, key } = attempt
    const limitedFor = this.blame(attempt, circuit, kind, retryAfterMs)
    this.tried = added(this.tried, key.index)
    if (action.skipForRequest) this.skipped = added(this.skipped, this.t)

    if (action.failover === 'never') {
      this.stopped = 'final'
      return
    }
    if (action.nextKey && this.hasFreeKey(target)) return // next() takes it at once
    const canRetry = this.retries < target.retry.attempts && !action.skipForRequest
    if (action.retry === 'retry_after' && canRetry && waitsFor(limitedFor, target.retry)) {
      this.retries++
      this.pendingWait = limitedFor
      this.pinned = key.index
      return
    }
    // A retry into a circuit this failure just opened would only be skipped: fail over instead,
    // unless another key of the pool can take the retry (circuits are per key and model) — one
    // whose circuit admits it now, not one half-open whose one probe another request holds.
    if (action.retry === 'backoff' && canRetry && (circuit.admits() || this.keyAdmits(target, key.index))) {
      this.pendingWait = backoffMs(this.retries, target.retry, this.random)
      this.retries++
      this.tried = NONE
      return
    }
    if (action.failover === 'larger_context' || action.failover === 'other_kind') {
      for (let i = this.t + 1; i < this.targets.length; i++) {
        if (!failsOverTo(action.failover, target, this.targets[i]!)) this.skipped = added(this.skipped, i)
      }
    }
    this.moveOn()
  }

  /**
   * After content reached the client, failed with `kind`: the first target past the current one
   * that can continue from the relayed text (the `prefill` feature), that the kind's row lets it
   * fail over to (`internal`: another provider kind; `larger_context`: a larger window; `never`:
   * none) and whose circuit admits it; null when there is none, or the request already switched once.
   */
  continuation(kind: FailureKind): Attempt | null {
    if (this.current !== null) throw new Error('settle the previous attempt first')
    if (this.switched) return null
    this.switched = true
    const failover = ACTIONS[kind].failover
    if (failover === 'never') return null
    const from = this.targets[this.t]!
    for (let i = this.t + 1; i < this.targets.length; i++) {
      const target = this.targets[i]!
      if (this.skipped.has(i) || !target.model.features.includes('prefill')) continue
      if (!failsOverTo(failover, from, target)) continue
      this.t = i
      this.retries = 0
      this.tried = NONE
      const started = this.tryKeys(target)
      if (started) return started.attempt
    }
    return null
  }

  /**
   * When `next()` stopped `exhausted` before any attempt: one attempt anyway, on the first target
   * (in order) with a key whose circuit lets it through — its key that wakes first. Rests choose
   * among alternatives: a request whose every key rests gets the upstream's own answer (a 429 with
   * its `retry-after`), which tells the client more than a refusal of ours. An open circuit is a
   * skip (DESIGN §10): with every circuit open, none — `circuitsOpen()` says until when. Null once
   * anything was attempted.
   */
  lastResort(): Attempt | null {
    if (this.current !== null) throw new Error('settle the previous attempt first')
    if (this.count > 0 || this.stopped || this.targets.length === 0) return null
    this.stopped = 'final'
    // Nothing was attempted, so no target was skipped for a failure yet.
    for (let t = 0; t < this.targets.length; t++) {
      const target = this.targets[t]!
      const { pool } = target
      let key: PoolKey | null = null
      for (const k of pool.keys) {
        if (!this.circuitOf(target, k).admits()) continue
        if (key === null || pool.restingUntil(k.index) < pool.restingUntil(key.index)) key = k
      }
      const started = key && this.admit(target, key)
      if (!started) continue
      this.t = t
      return started.attempt
    }
    return null
  }

  /**
   * After `lastResort()` found nothing to try: when the first circuit of the request's targets lets
   * a request through again (epoch ms), and the primary's id; null when something was attempted.
   */
  circuitsOpen(): { until: number; model: string } | null {
    if (this.count > 0 || this.targets.length === 0) return null
    let until = Number.POSITIVE_INFINITY
    for (const target of this.targets)
      for (const k of target.pool.keys) until = Math.min(until, this.circuitOf(target, k).admitsAt())
    return { until, model: this.targets[0]!.id }
  }

  /**
   * Is there a target left to fail over to, one that would be tried now: not skipped, with a key
   * awake whose circuit lets it through? (A slow first token with none left is waited on: a
   * fallback whose circuit is open or whose keys all rest is no reason to give it up.)
   */
  hasFallback(): boolean {
    for (let i = this.t + 1; i < this.targets.length; i++) {
      if (this.skipped.has(i)) continue
      if (this.keyAdmits(this.targets[i]!)) return true
    }
    return false
  }

  /**
   * What a failure of `kind` says of the attempt's target and key, as `ACTIONS[kind]` has it: the
   * circuit's verdict and the key's rest. Returns how long a rate-limited key rests (0 otherwise):
   * its rest and the wait for it are one number, so the key wakes as the wait ends.
   */
  private blame(attempt: Attempt, circuit: Circuit, kind: FailureKind, retryAfterMs: number | null): number {
    const action = ACTIONS[kind]
    const { target, key } = attempt
    if (action.circuit === 'failure') circuit.failure()
    else if (action.circuit === 'alive') circuit.success()
    else circuit.release()
    const limitedFor =
      action.key === 'rest_retry_after'
        ? (retryAfterMs ?? backoffMs(this.retries, target.retry, this.random))
        : 0
    if (action.key === 'rest_cooldown') target.pool.rest(key.index, target.circuit.cooldownMs, 'cooldown')
    else if (limitedFor > 0) target.pool.rest(key.index, limitedFor)
    return limitedFor
  }

  /** Starts an attempt on the first key of `target` that is awake, untried and let through by its circuit. */
  private tryKeys(target: Target): { attempt: Attempt } | null {
    const pinned = this.pinned
    this.pinned = null
    // `tried` as it is until a key is passed over here; then a copy of it, made once (`tried`
    // itself is not to change).
    let passed: Set<number> | null = null
    if (pinned !== null) {
      const k = target.pool.keys[pinned]
      if (k && target.pool.restingUntil(pinned) === 0) {
        const started = this.admit(target, k)
        if (started) return started
      }
      passed = new Set(this.tried).add(pinned)
    }
    for (;;) {
      const k = target.pool.pick(passed ?? this.tried, this.deps.session)
      if (k === null) return null
      const started = this.admit(target, k)
      if (started) return started
      passed = (passed ?? new Set(this.tried)).add(k.index)
    }
  }

  private admit(target: Target, key: PoolKey): { attempt: Attempt } | null {
    const circuit = this.circuitOf(target, key)
    const turn = circuit.admit()
    if (turn === 'skip') return null
    this.count++
    const attempt: Attempt = { target, key, probe: turn === 'probe', n: this.count }
    this.current = { attempt, circuit }
    return { attempt }
  }

  /** A key of `target` (other than `except`) that is awake and whose circuit would let an attempt through now. */
  private keyAdmits(target: Target, except?: number): boolean {
    return target.pool.keys.some(
      (k) =>
        k.index !== except && target.pool.restingUntil(k.index) === 0 && this.circuitOf(target, k).admits(),
    )
  }

  /** The (key, model) circuit of `key` on `target`. */
  private circuitOf(target: Target, key: PoolKey): Circuit {
    return this.deps.board.get(
      { provider: target.provider.prefix, key: key.index, model: target.model.name },
      target.circuit,
    )
  }

  private hasFreeKey(target: Target): boolean {
    return target.pool.keys.some((k) => !this.tried.has(k.index) && target.pool.restingUntil(k.index) === 0)
  }

  private moveOn(): void {
    this.t++
    this.retries = 0
    this.tried = NONE
    this.pendingWait = 0
    this.pinned = null
  }

  private take(): { attempt: Attempt; circuit: Circuit } {
    const cur = this.current
    if (cur === null) throw new Error('no attempt to settle')
    this.current = null
    this.last = cur.attempt
    return cur
  }
}
