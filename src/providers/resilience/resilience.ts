/**
 * @module
 * The process's resilience state, built once at app assembly: each provider's key pool, retry and
 * circuit policies, the circuit board, and an adapter per pool key (an attempt speaks with its
 * key's `api_key` and `base_url`). Per process: circuits and key rests are not shared between
 * instances. A live reload builds a new one from the previous: a provider whose config is unchanged
 * keeps its key pool (its rests) and its circuits; a changed one starts afresh.
 *
 * @example
 * const resilience = new Resilience(config.providers, adapters)
 * const target = resilience.target(entry.provider, entry.model, entry.id)
 * const { provider, adapter } = resilience.keyed(target, attempt.key)
 */
import { upstreamModelName } from '../../config/models.ts'
import type { ModelConfig, ProviderConfig } from '../../config/schema.ts'
import { type Clock, systemClock } from '../../util/clock.ts'
import { createAdapter } from '../index.ts'
import type { ProviderAdapter } from '../types.ts'
import type { Target } from './attempt-plan.ts'
import { CircuitBoard, type CircuitPolicy, type CircuitTarget } from './circuit.ts'
import { KeyPool, type PoolKey } from './key-pool.ts'
import { poolKeys, resolveCircuit, resolveRetry } from './policy.ts'
import type { RetryPolicy } from './retry-wait.ts'

interface ProviderState {
  /** As configured, in JSON: a reload keeps this state only for the very same config. */
  configured: string
  pool: KeyPool
  retry: RetryPolicy
  circuit: CircuitPolicy
  /** Per pool key: the provider config with that key, and its adapter (made on first use). */
  keyed: Array<{ provider: ProviderConfig; adapter: ProviderAdapter | null }>
  /**
   * Each configured model's target, made on its first request (`target`): a request's routes are
   * then a lookup, not a model name and a view lookup each. Weak: a reload's new model objects
   * replace the old, which go with the catalogue that held them.
   */
  targets: WeakMap<ModelConfig, Target>
}

export class Resilience {
  readonly board: CircuitBoard
  /**
   * The circuits a live reload reset (their provider's settings changed, or it was removed) that
   * were open or half-open: each is owed its `circuit.closed` (app/build.ts sends it).
   */
  readonly reset: CircuitTarget[] = []
  private readonly providers = new Map<string, ProviderState>()

  /**
   * `adapters`: the app's adapter per provider, used for a key that is the provider's own
   * `api_key` at its own `base_url`. Time is the system clock's: waits are real sleeps.
   * `previous`: the state a live reload hands on (the providers configured exactly as before).
   */
  constructor(
    providers: readonly ProviderConfig[],
    adapters: ReadonlyMap<string, ProviderAdapter>,
    readonly clock: Clock = systemClock,
    previous?: Resilience,
  ) {
    this.board = new CircuitBoard(clock)
    const kept = new Set<string>()
    for (const p of providers) {
      const configured = JSON.stringify(p)
      const before = previous?.providers.get(p.prefix)
      if (before?.configured === configured) {
        this.providers.set(p.prefix, before)
        kept.add(p.prefix)
        continue
      }
      const specs = poolKeys(p)
      const keyed = specs.map((k) => {
        const own = k.apiKey === (p.api_key ?? '') && k.baseUrl === undefined
        const provider: ProviderConfig = own
          ? p
          : { ...p, api_key: k.apiKey, base_url: k.baseUrl ?? p.base_url, keys: undefined }
        return { provider, adapter: own ? (adapters.get(p.prefix) ?? null) : null }
      })
      this.providers.set(p.prefix, {
        configured,
        pool: new KeyPool(specs, clock),
        retry: resolveRetry(p),
        circuit: resolveCircuit(p),
        keyed,
        targets: new WeakMap(),
      })
    }
    if (previous) this.reset = this.board.adopt(previous.board, (provider) => kept.has(provider))
  }

  /**
   * A configured model as the attempt loop tries it. Its keys rest on the rate limits of the model
   * the upstream is asked for: two configured models of one `upstream_name` share them.
   */
  target(provider: ProviderConfig, model: ModelConfig, id: string): Target {
    const s = this.providers.get(provider.prefix)!
    const known = s.targets.get(model)
    if (known?.id === id && known.provider === provider) return known
    const made: Target = {
      id,
      provider,
      model,
      pool: s.pool.forModel(upstreamModelName(model)),
      retry: s.retry,
      circuit: s.circuit,
    }
    s.targets.set(model, made)
    return made
  }

  /** The provider config carrying `key` (its api_key, its base_url) and the adapter that speaks with it. */
  keyed(target: Target, key: PoolKey): { provider: ProviderConfig; adapter: ProviderAdapter } {
    const slot = this.providers.get(target.provider.prefix)!.keyed[key.index]!
    slot.adapter ??= createAdapter(slot.provider)
    return { provider: slot.provider, adapter: slot.adapter }
  }
}
