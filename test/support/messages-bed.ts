/**
 * @module
 * The bed of the Messages-surface end-to-end tests: the real gateway (port 0, temporary database)
 * in front of a fake Anthropic replaying the recordings, the OpenAI mock upstream, a fake Gemini
 * and the demo provider; the official `@anthropic-ai/sdk` client; raw Anthropic SSE helpers.
 *
 * Models: `anthropic/{text,tool,thinking}` (the fake picks the recording by model name),
 * `mock/gpt-4o-mini` (every feature), `mock/bare` (none), `gemini/text`, `demo/agent`.
 *
 * @example
 * const bed = await startMessagesBed()
 * await bed.client().messages.create({ model: 'anthropic/text', max_tokens: 64, messages })
 * await bed.stop()
 */
import { expect } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { type MockUpstream, startMockUpstream } from '../../scripts/mock-upstream.ts'
import { FEATURES } from '../../src/config/schema-providers.ts'
import { type FakeUpstream, startFakeAnthropic } from './fake-anthropic.ts'
import { startFakeGemini } from './fake-gemini.ts'
import { DEMO_PROVIDER, PLANS, startGateway, type TestGateway } from './gateway.ts'

export const UPSTREAM_KEY = 'sk-upstream-secret-123'
/** The beta header the tests send and the fake Anthropic insists on. */
export const BETA = 'interleaved-thinking-2025-05-14,context-management-2025-06-27'

const model = (
  name: string,
  features: readonly string[] = FEATURES,
  extra: Record<string, unknown> = {},
) => ({
  name,
  context_window: 200_000,
  max_output_tokens: 64_000,
  features: [...features],
  ...extra,
})

export const AGENT_MODEL = model('agent', [
  'streaming',
  'tools',
  'parallel_tool_calls',
  'vision',
  'system_messages',
  'reasoning',
])

export interface MessagesBed {
  gw: TestGateway
  anthropic: FakeUpstream<string>
  gemini: FakeUpstream<string>
  mock: MockUpstream
  /** A key on the `unlimited` plan. */
  key: string
  client(apiKey?: string, opts?: Partial<ConstructorParameters<typeof Anthropic>[0]>): Anthropic
  /** `POST /v1/messages` with the bed's key in `x-api-key`, `anthropic-version` and the beta header. */
  post(body: unknown, headers?: Record<string, string>, signal?: AbortSignal): Promise<Response>
  stop(): Promise<void>
}

export async function startMessagesBed(
  opts: { eventDelayMs?: number; expectBeta?: string | null } = {},
): Promise<MessagesBed> {
  const anthropic = await startFakeAnthropic({
    apiKey: UPSTREAM_KEY,
    expectBeta: opts.expectBeta === null ? undefined : (opts.expectBeta ?? BETA),
    eventDelayMs: opts.eventDelayMs,
    afterToolResult: 'text',
  })
  const gemini = await startFakeGemini({ apiKey: UPSTREAM_KEY, eventDelayMs: opts.eventDelayMs })
  const mock = await startMockUpstream({ chunks: 4 })
  const gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0, stream_hold_ms: 300, stream_keepalive_ms: 250 },
      usage: { flush_ms: 20 },
      providers: [
        {
          prefix: 'anthropic',
          kind: 'anthropic',
          base_url: anthropic.url,
          api_key: UPSTREAM_KEY,
          models: ['text', 'tool', 'thinking', 'stream-error', 'truncated'].map((n) =>
            model(n, ['streaming', 'tools', 'parallel_tool_calls', 'vision', 'system_messages', 'reasoning']),
          ),
        },
        {
          prefix: 'mock',
          kind: 'openai',
          base_url: mock.url,
          api_key: UPSTREAM_KEY,
          models: [
            model('gpt-4o-mini'),
            model('bare', [], { upstream_name: 'gpt-4o-mini' }),
            model('stream-only', ['streaming'], { upstream_name: 'gpt-4o-mini' }),
            model('slow-stream'),
            model('fault-cut-stream'),
          ],
        },
        {
          prefix: 'gemini',
          kind: 'gemini',
          base_url: gemini.url,
          api_key: UPSTREAM_KEY,
          models: [model('text', ['streaming', 'tools', 'system_messages', 'vision'])],
        },
        { ...DEMO_PROVIDER, models: [...DEMO_PROVIDER.models, AGENT_MODEL] },
      ],
      plans: { ...PLANS, tiny: { rpm: 5, rpd: null, models: ['*'] } },
      default_plan: 'free',
    },
  })
  const { key } = await gw.key('messages', 'unlimited')
  return {
    gw,
    anthropic,
    gemini,
    mock,
    key,
    client: (apiKey = key, extra = {}) =>
      new Anthropic({
        apiKey,
        baseURL: gw.url,
        maxRetries: 0,
        timeout: 20_000,
        defaultHeaders: { 'anthropic-beta': BETA },
        ...extra,
      }),
    post: (body, headers = {}, signal) =>
      fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': key,
          'anthropic-version': '2023-06-01',
          'anthropic-beta': BETA,
          'content-type': 'application/json',
          ...headers,
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
        signal,
      }),
    async stop() {
      await gw.stop()
      await Promise.all([anthropic.stop(), gemini.stop(), mock.stop()])
    },
  }
}

export interface AnthropicEvent {
  event: string
  data: Record<string, any>
  /** The event's bytes as sent. */
  raw: string
}

/** Splits an Anthropic SSE body into events (`event:` + one `data:` line each). */
export function parseAnthropicSSE(text: string): AnthropicEvent[] {
  const events: AnthropicEvent[] = []
  for (const block of text.split('\n\n')) {
    if (block.trim() === '' || block.startsWith(':')) continue
    const lines = block.split('\n')
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7)
    const data = lines.find((l) => l.startsWith('data: '))?.slice(6)
    if (event === undefined || data === undefined)
      throw new Error(`unexpected SSE block: ${block.slice(0, 200)}`)
    events.push({ event, data: JSON.parse(data), raw: `${block}\n\n` })
  }
  return events
}

/** Asserts an Anthropic-shaped error with that status and type; returns the body. */
export async function expectAnthropicError(res: Response, status: number, type: string) {
  const text = await res.text()
  expect(text).not.toContain(UPSTREAM_KEY)
  const body = JSON.parse(text) as {
    type: string
    error: { type: string; message: string }
    request_id?: string
  }
  expect({ status: res.status, type: body.type, errorType: body.error?.type }).toEqual({
    status,
    type: 'error',
    errorType: type,
  })
  expect(typeof body.error.message).toBe('string')
  expect(body.error.message.length).toBeGreaterThan(10)
  expect(res.headers.get('content-type')).toStartWith('application/json')
  expect(res.headers.get('x-request-id')).toBeTruthy()
  return body
}

export const hello = [{ role: 'user' as const, content: 'Hello' }]
