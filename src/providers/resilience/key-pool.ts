/**
 * @module
 * A provider's keys (`keys: [{api_key, weight, base_url?}]`, or its one `api_key`), picked by
 * weight with smooth weighted round-robin — deterministic, so weights 3 and 1 give exactly three
 * picks of the first key in every four, interleaved rather than in runs — skipping keys that rest.
 * A key rests after a credential or quota failure (`circuit.cooldown_s`: every model of the
 * provider, the key itself is dead for now) or a 429 (until its `retry-after` passes: for that model
 * only — OpenAI, Anthropic and Gemini limit each model on its own, as circuits are per key and
 * model), so the next request goes straight to a key that can answer. The attempt loop sees a
 * model's view (`forModel`). Only a rate limit's rest is worth waiting out (`nextWake`): a key
 * cooling down is dead for now, and a request with no other key fails over at once rather than
 * wait for it (DESIGN §10).
 *
 * A request of an agent session (`session`: its id's hash) keeps to one key instead while that key
 * can answer (util/affinity.ts): the provider's prompt cache is per key. Sessions without an id keep the
 * round-robin.
 *
 * Keys are named by their position in the list (`#0`, `#1`) wherever they are shown: the key
 * itself never leaves this object but to go into the upstream request.
 *
 * @example
 * const keys = new KeyPool([{ apiKey: 'a', weight: 3 }, { apiKey: 'b', weight: 1 }], systemClock)
 * const pool = keys.forModel('gpt-4o')
 * const key = pool.pick()            // #0, #0, #1, #0, … (one request's tried keys can be excluded)
 * pool.rest(key.index, 30_000, 'cooldown')   // a 401: this key sits out for the cooldown, every model
 * pool.rest(key.index, 2_000)                    // a 429 `retry-after: 2`: gpt-4o only; a wait a request may take
 */
import { AffinityTable, type SessionHash } from '../../util/affinity.ts'
import type { Clock } from '../../util/clock.ts'
import { SmoothRoundRobin } from '../../util/smooth-round-robin.ts'

export interface KeySpec {
  apiKey: string
  weight: number
  /** Overrides the provider's `base_url` for this key (a regional endpoint). */
  baseUrl?: string
}

/** A rate limit's rest ends when its `retry-after` says; a cooldown's is a dead key's (401, 402, 403, no quota). */
type RestReason = 'rate_limit' | 'cooldown'

export interface PoolKey extends Readonly<KeySpec> {
  /** Position in the provider's list: the key's name in logs, metrics and circuits. */
  readonly index: number
}

/** What a provider's models share of its keys: their order, cooldowns and sessions (this module's own). */
class SharedKeys {
  readonly keys: readonly PoolKey[]
  /** Smooth weighted round-robin over the keys' weights (util/smooth-round-robin.ts). */
  readonly order: SmoothRoundRobin
  /** Epoch ms until which each key cools down (a credential or quota failure); 0 when it does not. */
  readonly cooledUntil: number[]
  /** Which key each recent session is on (bounded). */
  readonly sessions: AffinityTable

  constructor(
    specs: readonly KeySpec[],
    readonly clock: Clock,
  ) {
    if (specs.length === 0) throw new Error('a key pool needs at least one key')
    this.keys = specs.map((s, index) => Object.freeze({ ...s, weight: Math.max(1, s.weight), index }))
    this.order = new SmoothRoundRobin(this.keys.map((k) => k.weight))
    this.cooledUntil = specs.map(() => 0)
    this.sessions = new AffinityTable(clock)
  }
}

/** A provider's keys: each upstream model's view of them (`forModel`), sharing their order, cooldowns and sessions. */
export class KeyPool {
  private readonly shared: SharedKeys
  /** Each upstream model's view, made on first use (as many as the provider's configured models). */
  private readonly views = new Map<string, ModelKeys>()

  constructor(specs: readonly KeySpec[], clock: Clock) {
    this.shared = new SharedKeys(specs, clock)
  }

  /** The keys as upstream model `name` sees them: their cooldowns shared, its rate limits its own. */
  forModel(name: string): ModelKeys {
    let view = this.views.get(name)
    if (!view) {
      view = new ModelKeys(this.shared)
      this.views.set(name, view)
    }
    return view
  }
}

/**
 * One model's view of its provider's keys, the one the attempt loop picks from: a key is usable
 * when it neither cools down (key-wide: the credential or the account) nor rests on this model's
 * rate limit (providers limit each model on its own, so a 429 for one model leaves the key to the
 * others; docs/failures.md). Made by `KeyPool.forModel` only.
 */
export class ModelKeys {
  readonly keys: readonly PoolKey[]
  /** Epoch ms until which each key rests on this model's rate limit; 0 when it does not. */
  private readonly limitedUntil: number[]

  /** @internal `KeyPool.forModel`'s: `pool` is the provider's shared state, never reachable from outside. */
  constructor(private readonly pool: SharedKeys) {
    this.keys = pool.keys
    this.limitedUntil = pool.keys.map(() => 0)
  }

  /**
   * The next key by weight among those neither resting nor in `exclude` (the keys this request
   * already tried); null when there is none. With a `session`: the session's key while it is among
   * them, else the one it moves to (and stays on).
   */
  pick(exclude?: ReadonlySet<number>, session?: SessionHash | null): PoolKey | null {
    const now = this.pool.clock.now()
    // One key and no session (the usual pool): `order.pick` would give key 0 exactly when it is
    // usable (one key's score never moves), so that is asked without the arrow and the round.
    if (this.keys.length === 1 && session == null) return this.usable(0, now, exclude) ? this.keys[0]! : null
    const usable = (i: number) => this.usable(i, now, exclude)
    const { order, sessions } = this.pool
    const best = session == null ? order.pick(usable) : sessions.choose(session, order.weights, usable)
    return best === null ? null : this.keys[best]!
  }

  /** The one rule of which keys a pick may take: neither resting at `now` nor in `exclude`. */
  private usable(index: number, now: number, exclude: ReadonlySet<number> | undefined): boolean {
    return !exclude?.has(index) && this.pool.cooledUntil[index]! <= now && this.limitedUntil[index]! <= now
  }

  /**
   * Key `index` sits out for `ms` from now: for this model on a `rate_limit`, for every model of
   * the provider on a `cooldown` (a longer rest already set is kept).
   */
  rest(index: number, ms: number, reason: RestReason = 'rate_limit'): void {
    const until = this.pool.clock.now() + Math.max(0, ms)
    const rests = reason === 'cooldown' ? this.pool.cooledUntil : this.limitedUntil
    if (until > rests[index]!) rests[index] = until
  }

  /** Epoch ms at which key `index` may be used again by this model; 0 when it is not resting. */
  restingUntil(index: number): number {
    const until = Math.max(this.pool.cooledUntil[index]!, this.limitedUntil[index]!)
    return until > this.pool.clock.now() ? until : 0
  }

  /**
   * When the first key outside `exclude` resting on this model's rate limit wakes (epoch ms); null
   * when none does. With every key resting, the loop may wait for it if that is within
   * `max_retry_after_s`; a key cooling down (a dead key, no quota) is not waited for.
   */
  nextWake(exclude?: ReadonlySet<number>): number | null {
    const now = this.pool.clock.now()
    let soonest: number | null = null
    for (const key of this.keys) {
      const until = this.limitedUntil[key.index]!
      if (exclude?.has(key.index) || until <= now || this.pool.cooledUntil[key.index]! > now) continue
      if (soonest === null || until < soonest) soonest = until
    }
    return soonest
  }
}
