/**
 * @module
 * Upstream health for the console, read from the exposition `/metrics` serves (every process of
 * this server, so the console and a scrape agree): attempts per provider and model by outcome
 * (`ok` or the failure kind) since the processes started, and every circuit's state per
 * (provider, key #, model) — the worst any process holds, as the gauge reports it. Circuits and
 * attempts are each process's own memory: a replica elsewhere has its own. Each failed attempt is
 * somebody's: the provider's (`failed`), the request's (`client_faults`) or the gateway's own
 * (`gateway_faults`, kind `internal`: a bug of ours, never the provider's).
 */
import { ACTIONS, type FailureKind } from '../providers/resilience/failure-kinds.ts'
import { parseExposition } from './live.ts'

/**
 * An attempt the upstream refused for what the request held (a bad parameter, a context too
 * long, its content policy): the provider answered and its circuit counts it alive — the client's
 * mistake, not the provider's failure.
 */
const clientFault = (kind: string) => ACTIONS[kind as FailureKind]?.circuit === 'alive'

/** Whose failure an attempt's outcome is; `ok` is nobody's. */
function whose(outcome: string): 'failed' | 'client_faults' | 'gateway_faults' {
  if (outcome === ('internal' satisfies FailureKind)) return 'gateway_faults'
  return clientFault(outcome) ? 'client_faults' : 'failed'
}

const STATE = ['closed', 'half_open', 'open'] as const

export async function upstreamFigures(metrics: { render(): string | Promise<string> }) {
  const samples = parseExposition(await metrics.render())
  const models = new Map<
    string,
    {
      provider: string
      model: string
      attempts: number
      /** The provider's failures (5xx, timeouts, its rate limits, refused credentials …). */
      failed: number
      /** Attempts refused for the request's own fault, apart (`clientFault`). */
      client_faults: number
      /** Attempts the gateway's own code failed (kind `internal`), apart. */
      gateway_faults: number
      failures: Record<string, number>
    }
  >()
  const circuits: Array<{ provider: string; key: string; model: string; state: string }> = []
  for (const s of samples) {
    if (s.name === 'switchyard_upstream_attempts_total') {
      const provider = s.labels.provider ?? ''
      const model = s.labels.model ?? ''
      const id = `${provider}\u0000${model}`
      let m = models.get(id)
      if (!m) {
        m = { provider, model, attempts: 0, failed: 0, client_faults: 0, gateway_faults: 0, failures: {} }
        models.set(id, m)
      }
      m.attempts += s.value
      const outcome = s.labels.outcome ?? 'unknown'
      if (outcome !== 'ok') {
        m[whose(outcome)] += s.value
        m.failures[outcome] = (m.failures[outcome] ?? 0) + s.value
      }
    } else if (s.name === 'switchyard_circuit_state') {
      circuits.push({
        provider: s.labels.provider ?? '',
        key: s.labels.key ?? '',
        model: s.labels.model ?? '',
        state: STATE[s.value] ?? 'closed',
      })
    }
  }
  const worstFirst = (a: { state: string }, b: { state: string }) =>
    STATE.indexOf(b.state as never) - STATE.indexOf(a.state as never)
  return {
    models: [...models.values()].sort(
      (a, b) =>
        b.failed - a.failed ||
        b.gateway_faults - a.gateway_faults ||
        b.client_faults - a.client_faults ||
        b.attempts - a.attempts ||
        a.model.localeCompare(b.model),
    ),
    circuits: circuits.sort(
      (a, b) =>
        worstFirst(a, b) ||
        a.provider.localeCompare(b.provider) ||
        a.model.localeCompare(b.model) ||
        a.key.localeCompare(b.key),
    ),
  }
}
