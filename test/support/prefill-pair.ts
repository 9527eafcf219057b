/**
 * The gateway of the continuation tests (DESIGN §10): one `oai` provider (kind openai) at a local
 * upstream, serving a model and its fallback, which lists `prefill` and so may continue a stream
 * the first one cut after content. Cuts are socket errors, never stalls: the timeouts only guard
 * a loaded machine (a first byte of 519 ms was seen in CI). Without `retry` the provider makes one
 * call a request and its circuit never opens (gateway.ts `oneCallPerRequest`).
 */
import { ADMIN_TOKEN } from './config-doc.ts'

export interface PrefillPair {
  upstreamUrl: string
  /** The model a stream asks for, and its fallback listing `prefill`. */
  names: [first: string, next: string]
  /** Each model's `max_output_tokens`. */
  maxOutput: number
  /** USD per 1M tokens of a model, by name (none: unpriced). */
  pricing?: Record<string, { input: number; output: number }>
  retry?: Record<string, number>
  plans: Record<string, unknown>
  defaultPlan: string
}

export function prefillPairDoc(p: PrefillPair): Record<string, unknown> {
  const [first, next] = p.names
  const features = ['streaming', 'system_messages']
  const model = (name: string, extra: Record<string, unknown>) => ({
    name,
    context_window: 128_000,
    max_output_tokens: p.maxOutput,
    features,
    ...(p.pricing?.[name] ? { pricing: p.pricing[name] } : {}),
    ...extra,
  })
  return {
    server: { host: '127.0.0.1', port: 0 },
    admin: { token: ADMIN_TOKEN },
    providers: [
      {
        prefix: 'oai',
        kind: 'openai',
        base_url: p.upstreamUrl,
        api_key: 'sk-up',
        ...(p.retry ? { retry: p.retry } : {}),
        timeouts: { first_byte_ms: 15_000, first_token_ms: 15_000, idle_ms: 15_000, total_ms: 30_000 },
        models: [
          model(first, { fallbacks: [`oai/${next}`] }),
          model(next, { features: [...features, 'prefill'] }),
        ],
      },
    ],
    plans: p.plans,
    default_plan: p.defaultPlan,
  }
}
