/**
 * @module
 * A provider's §10 settings resolved over their defaults: its key pool (`api_key` and the `keys`
 * list, which may be given together), `retry` and `circuit`.
 *
 * @example
 * poolKeys({ prefix: 'openai', kind: 'openai', api_key: 'sk-1', models: [] })   // [{ apiKey: 'sk-1', weight: 1 }]
 * resolveRetry(provider)    // { attempts: 2, backoffMs: 250, maxBackoffMs: 4000, maxRetryAfterS: 10 }
 */
import type { ProviderConfig } from '../../config/schema.ts'
import { type CircuitPolicy, DEFAULT_CIRCUIT } from './circuit.ts'
import type { KeySpec } from './key-pool.ts'
import { DEFAULT_RETRY, type RetryPolicy } from './retry-wait.ts'

/**
 * The provider's keys: its `api_key` (weight 1) and its `keys`, in that order. A keyless provider
 * (demo, a local server) is one key with no value.
 */
export function poolKeys(p: ProviderConfig): KeySpec[] {
  const pool: KeySpec[] = p.api_key !== undefined || !p.keys ? [{ apiKey: p.api_key ?? '', weight: 1 }] : []
  for (const k of p.keys ?? []) {
    pool.push({
      apiKey: k.api_key,
      weight: k.weight ?? 1,
      ...(k.base_url !== undefined ? { baseUrl: k.base_url } : {}),
    })
  }
  return pool
}

export function resolveRetry(p: ProviderConfig): RetryPolicy {
  const r = p.retry
  return {
    attempts: r?.attempts ?? DEFAULT_RETRY.attempts,
    backoffMs: r?.backoff_ms ?? DEFAULT_RETRY.backoffMs,
    maxBackoffMs: r?.max_backoff_ms ?? Math.max(DEFAULT_RETRY.maxBackoffMs, r?.backoff_ms ?? 0),
    maxRetryAfterS: r?.max_retry_after_s ?? DEFAULT_RETRY.maxRetryAfterS,
  }
}

export function resolveCircuit(p: ProviderConfig): CircuitPolicy {
  const c = p.circuit
  return {
    failures: c?.failures ?? DEFAULT_CIRCUIT.failures,
    cooldownMs: c?.cooldown_s !== undefined ? c.cooldown_s * 1000 : DEFAULT_CIRCUIT.cooldownMs,
  }
}
