/**
 * DESIGN §10's settings in the config: key pools, retry, circuit, first_token_ms, fallbacks that
 * must name configured models, and the `prefill` feature; each problem names its path.
 */
import { describe, expect, test } from 'bun:test'
import { ConfigError, parseConfig } from '../../src/config/index.ts'
import { poolKeys, resolveCircuit, resolveRetry } from '../../src/providers/resilience/policy.ts'
import { testConfigDoc } from '../support/gateway.ts'

function problems(fn: () => unknown): Array<{ path: string; message: string }> {
  try {
    fn()
  } catch (e) {
    if (e instanceof ConfigError) return e.problems
    throw e
  }
  throw new Error('expected a ConfigError')
}

const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 8192,
  max_output_tokens: 1024,
  features: ['streaming'],
  ...extra,
})

/** The §10 example: a pool beside api_key, retry, circuit, timeouts with first_token_ms, fallbacks across providers. */
function doc(openai: Record<string, unknown> = {}, gpt4o: Record<string, unknown> = {}) {
  const d = testConfigDoc() as any
  d.providers.push(
    {
      prefix: 'openai',
      kind: 'openai',
      base_url: 'https://api.openai.com/v1',
      api_key: 'sk-main',
      keys: [
        { api_key: 'sk-a', weight: 3 },
        { api_key: 'sk-b', base_url: 'https://eu.api.openai.com/v1' },
      ],
      retry: { attempts: 2, backoff_ms: 250, max_backoff_ms: 4000, max_retry_after_s: 10 },
      circuit: { failures: 5, cooldown_s: 30 },
      timeouts: { first_byte_ms: 30000, first_token_ms: 20000, idle_ms: 30000, total_ms: 600000 },
      models: [
        model('gpt-4o', { fallbacks: ['anthropic/claude-sonnet-4-5', 'openai/gpt-4o-mini'], ...gpt4o }),
        model('gpt-4o-mini'),
      ],
      ...openai,
    },
    {
      prefix: 'anthropic',
      kind: 'anthropic',
      api_key: 'sk-ant',
      models: [model('claude-sonnet-4-5', { features: ['streaming', 'prefill'] })],
    },
  )
  return d
}

describe('config: resilience (DESIGN §10)', () => {
  test('the §10 example loads: keys, retry, circuit, first_token_ms, fallbacks, prefill', () => {
    const c = parseConfig(doc())
    const openai = c.providers.find((p) => p.prefix === 'openai')!
    expect(openai.models[0]!.fallbacks).toEqual(['anthropic/claude-sonnet-4-5', 'openai/gpt-4o-mini'])
    expect(openai.timeouts?.first_token_ms).toBe(20000)
    expect(poolKeys(openai)).toEqual([
      { apiKey: 'sk-main', weight: 1 },
      { apiKey: 'sk-a', weight: 3 },
      { apiKey: 'sk-b', weight: 1, baseUrl: 'https://eu.api.openai.com/v1' },
    ])
    expect(resolveRetry(openai)).toEqual({
      attempts: 2,
      backoffMs: 250,
      maxBackoffMs: 4000,
      maxRetryAfterS: 10,
    })
    expect(resolveCircuit(openai)).toEqual({ failures: 5, cooldownMs: 30_000 })
    expect(c.providers.find((p) => p.prefix === 'anthropic')!.models[0]!.features).toContain('prefill')
  })

  test('defaults: one key is a pool of one; retry 2 × 250 ms up to 4 s, retry-after up to 10 s; circuit 5 failures, 30 s', () => {
    const c = parseConfig(doc({ keys: undefined, retry: undefined, circuit: undefined }))
    const openai = c.providers.find((p) => p.prefix === 'openai')!
    expect(poolKeys(openai)).toEqual([{ apiKey: 'sk-main', weight: 1 }])
    expect(poolKeys({ ...openai, api_key: undefined, keys: [{ api_key: 'k' }] })).toEqual([
      { apiKey: 'k', weight: 1 },
    ])
    expect(resolveRetry(openai)).toEqual({
      attempts: 2,
      backoffMs: 250,
      maxBackoffMs: 4000,
      maxRetryAfterS: 10,
    })
    expect(resolveRetry({ ...openai, retry: { backoff_ms: 8000 } }).maxBackoffMs).toBe(8000)
    expect(resolveCircuit(openai)).toEqual({ failures: 5, cooldownMs: 30_000 })
  })

  test('a fallback must name a configured model, not the model itself; the path says which', () => {
    const found = problems(() =>
      parseConfig(
        doc({}, { fallbacks: ['anthropic/claude-sonnet-4-5', 'anthropic/nope', 'openai/gpt-4o', 'ghost/x'] }),
      ),
    )
    const i = 1 // the openai provider follows testConfigDoc's own
    expect(found).toEqual([
      { path: `/providers/${i}/models/0/fallbacks/1`, message: expect.stringContaining("'anthropic/nope'") },
      { path: `/providers/${i}/models/0/fallbacks/2`, message: expect.stringContaining('itself') },
      { path: `/providers/${i}/models/0/fallbacks/3`, message: expect.stringContaining("'ghost/x'") },
    ])
  })

  test('shapes are checked with their paths: a fallback not prefix/name, a key without api_key, a zero weight, unknown keys', () => {
    const paths = (d: unknown) => problems(() => parseConfig(d)).map((p) => p.path)
    expect(paths(doc({}, { fallbacks: ['gpt-4o-mini'] }))).toContain('/providers/1/models/0/fallbacks/0')
    expect(paths(doc({ keys: [{ weight: 2 }] }))).toContain('/providers/1/keys/0/api_key')
    expect(paths(doc({ keys: [{ api_key: 'k', weight: 0 }] }))).toContain('/providers/1/keys/0/weight')
    expect(paths(doc({ keys: [] }))).toContain('/providers/1/keys')
    expect(paths(doc({ retry: { attempts: -1 } }))).toContain('/providers/1/retry/attempts')
    expect(paths(doc({ retry: { tries: 3 } }))).toContain('/providers/1/retry/tries')
    expect(paths(doc({ circuit: { failures: 0 } }))).toContain('/providers/1/circuit/failures')
    expect(paths(doc({ timeouts: { first_token_ms: 0 } }))).toContain('/providers/1/timeouts/first_token_ms')
    expect(paths(doc({ retry: { backoff_ms: 500, max_backoff_ms: 100 } }))).toEqual([
      '/providers/1/retry/max_backoff_ms',
    ])
  })

  test('an empty pool key is refused when secrets are needed, as an empty api_key is', () => {
    const d = doc({ keys: [{ api_key: 'sk-a' }, { api_key: '' }] })
    expect(problems(() => parseConfig(d)).map((p) => p.path)).toEqual(['/providers/1/keys/1/api_key'])
    expect(() => parseConfig(d, '', process.env, { secrets: false })).not.toThrow()
  })
})
