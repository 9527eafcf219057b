/**
 * @module
 * The bed of the resilience tests (DESIGN §10): the fault-injecting upstream behind a real gateway
 * whose providers all point at it — `prime` (openai, a pool of two keys, fallbacks), `claude`
 * (anthropic; `claude-p` falls back to `claude-q`, which continues an assistant prefill) and
 * `spare` (openai, a model that continues an assistant prefill) — with small retry waits and
 * cooldowns so faults cost milliseconds, and `tight`, prime's twin (the same keys, models and
 * fallbacks) whose timeouts are 400 ms: a test that stalls an upstream asks `tight/…` and sees
 * the timeout fire, while every healthy answer, fallbacks' included, has timeouts a loaded machine
 * never reaches.
 *
 * @example
 * const bed = await startResilienceBed()
 * bed.up.script({ model: 'gpt-a' }, 'server_error', 'ok')
 * const res = await bed.post('chat', 'prime/gpt-a')
 */
import type { Feature } from '../../src/config/schema-providers.ts'
import { Resilience } from '../../src/providers/resilience/index.ts'
import type { Clock } from '../../src/util/clock.ts'
import { type FaultUpstream, startFaultUpstream, type Wire } from './fault-upstream.ts'
import { ADMIN_TOKEN, bearer, PLANS, startGateway, type TestGateway } from './gateway.ts'

export const KEY_A = 'sk-prime-key-a-0001'
export const KEY_B = 'sk-prime-key-b-0002'
export const CLAUDE_KEY = 'sk-ant-claude-0003'

const ALL: Feature[] = ['streaming', 'system_messages', 'tools']
const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 128_000,
  max_output_tokens: 4096,
  features: ALL,
  ...extra,
})

/** Small retry waits and cooldowns: faults cost milliseconds. */
export const FAST = {
  retry: { attempts: 2, backoff_ms: 20, max_backoff_ms: 80, max_retry_after_s: 2 },
  circuit: { failures: 3, cooldown_s: 1 },
  // Never reached by a healthy answer, even with 3 test files at once on 2 cores (load 3–20; a
  // first byte took 519 ms in CI): one slowed past a timeout is retried or failed over, and the
  // test counting attempts or naming the answering model fails. Stall tests use TIGHT.
  timeouts: { first_byte_ms: 15_000, first_token_ms: 15_000, idle_ms: 15_000, total_ms: 20_000 },
}

/** The timeouts of a provider a test stalls (silent, slow first token, stall): they fire at 400 ms. */
export const TIGHT = { first_byte_ms: 400, first_token_ms: 400, idle_ms: 400, total_ms: 20_000 }

export interface PostOptions {
  stream?: boolean
  signal?: AbortSignal
  /** Offer the model a `weather` tool (in the surface's own shape). */
  tools?: boolean
  /** Chat streams: ask for the final usage chunk (`stream_options.include_usage`). */
  includeUsage?: boolean
}

/** The `weather` tool's parameters, offered by `post(…, { tools: true })`. */
const WEATHER = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
const TOOLS: Record<Wire, unknown[]> = {
  chat: [{ type: 'function', function: { name: 'weather', parameters: WEATHER } }],
  messages: [{ name: 'weather', input_schema: WEATHER }],
  responses: [{ type: 'function', name: 'weather', parameters: WEATHER }],
}

export interface ResilienceBed {
  up: FaultUpstream
  gw: TestGateway
  key: string
  /** A minimal request on `surface` for `model` (the surface's own shape), raw response. */
  post(surface: Wire, model: string, opts?: PostOptions): Promise<Response>
  /** The request log, newest first (admin API). */
  requests(): Promise<any[]>
  usage(): Promise<any>
  /**
   * Forgets scripts, attempts, key rests and circuits: each test starts from a healthy state.
   * `clock`: the circuits' and key rests' time from now on (a `ManualClock` makes a cooldown end
   * when the test says, not when a loaded machine's requests happen to outlast it).
   */
  reset(clock?: Clock): void
  stop(): Promise<void>
}

export async function startResilienceBed(
  opts: {
    words?: number
    providers?: (url: string) => Record<string, unknown>[]
    /** The config's `aliases` (virtual models over the bed's models). */
    aliases?: Record<string, unknown>[]
  } = {},
): Promise<ResilienceBed> {
  const up = await startFaultUpstream({ words: opts.words ?? 12 })
  const primeModels = [
    model('gpt-a', { fallbacks: ['claude/claude-b', 'spare/gpt-s'], pricing: { input: 1, output: 1 } }),
    model('gpt-solo'),
    model('gpt-small', { context_window: 8000, fallbacks: ['spare/gpt-s'] }),
  ]
  const pool = [{ api_key: KEY_A }, { api_key: KEY_B }]
  const providers = opts.providers?.(up.url) ?? [
    {
      prefix: 'prime',
      kind: 'openai',
      base_url: `${up.url}/v1`,
      keys: pool,
      ...FAST,
      models: primeModels,
    },
    {
      prefix: 'tight',
      kind: 'openai',
      base_url: `${up.url}/v1`,
      keys: pool,
      ...FAST,
      timeouts: TIGHT,
      models: primeModels,
    },
    {
      prefix: 'claude',
      kind: 'anthropic',
      base_url: up.url,
      api_key: CLAUDE_KEY,
      ...FAST,
      models: [
        model('claude-b', { fallbacks: ['prime/gpt-solo'], pricing: { input: 10, output: 30 } }),
        // Anthropic on both sides of a continuation: claude-q may finish what claude-p began.
        model('claude-p', { features: [...ALL, 'reasoning'], fallbacks: ['claude/claude-q'] }),
        model('claude-q', { features: [...ALL, 'reasoning', 'prefill'] }),
      ],
    },
    {
      prefix: 'spare',
      kind: 'openai',
      base_url: `${up.url}/v1`,
      api_key: 'sk-spare-0004',
      ...FAST,
      models: [model('gpt-s', { features: [...ALL, 'prefill'] })],
    },
  ]
  const gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers,
      ...(opts.aliases ? { aliases: opts.aliases } : {}),
      plans: PLANS,
      default_plan: 'unlimited',
    },
  })
  const { key } = await gw.key('resilient', 'unlimited')
  const post = (surface: Wire, modelId: string, o: PostOptions = {}) => {
    const turns = [{ role: 'user', content: 'count for me' }]
    const stream = o.stream ?? false
    const tools = o.tools ? { tools: TOOLS[surface] } : {}
    const [path, body, headers] =
      surface === 'chat'
        ? [
            '/v1/chat/completions',
            {
              model: modelId,
              messages: turns,
              stream,
              ...tools,
              ...(o.includeUsage ? { stream_options: { include_usage: true } } : {}),
            },
            bearer(key),
          ]
        : surface === 'messages'
          ? [
              '/v1/messages',
              { model: modelId, messages: turns, stream, max_tokens: 200, ...tools },
              { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
            ]
          : ['/v1/responses', { model: modelId, input: turns, stream, ...tools }, bearer(key)]
    return fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: o.signal,
    })
  }
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
  return {
    up,
    gw,
    key,
    post,
    async requests() {
      await gw.deps.recorder.flush()
      const r = await fetch(`${gw.url}/admin/v1/requests?limit=100`, { headers: admin })
      return ((await r.json()) as any).data
    },
    async usage() {
      await gw.deps.recorder.flush()
      return (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()
    },
    reset(clock?: Clock) {
      up.clear()
      const { deps } = gw
      deps.resilience = new Resilience(deps.config.providers, deps.adapters, clock)
      deps.metrics.circuits = () => deps.resilience.board.states()
    },
    async stop() {
      await gw.stop()
      await up.stop()
    },
  }
}
