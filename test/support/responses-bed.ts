/**
 * @module
 * The bed of the Responses end-to-end tests: the real gateway (port 0, temporary database) in front
 * of one provider of every kind, each on a local upstream that speaks its real wire —
 * - `demo/echo` (hosted tools dropped) and `demo/strict` (hosted tools refused);
 * - `openai/gpt-4o-mini`: an OpenAI-compatible chat API (the mock upstream), translated;
 * - `anthropic/<fixture>`, `gemini/<fixture>`: fakes replaying recorded streams, translated;
 * - `oair/<fixture>`: an OpenAI provider with `wire: responses` replaying recorded Responses
 *   streams, passed through.
 * Plus raw-stream helpers that check every event against the published schema.
 *
 * @example
 * const bed = await startResponsesBed()
 * const res = await bed.client().responses.create({ model: 'anthropic/text', input: 'Hi' })
 * await bed.stop()
 */
import { expect } from 'bun:test'
import OpenAI from 'openai'
import { type MockUpstream, startMockUpstream } from '../../scripts/mock-upstream.ts'
import { startFakeAnthropic } from './fake-anthropic.ts'
import { startFakeGemini } from './fake-gemini.ts'
import { type FakeResponses, startFakeResponses } from './fake-openai-responses.ts'
import type { FakeUpstream } from './fake-upstream.ts'
import { PLANS, startGateway, type TestGateway } from './gateway.ts'
import { relaxed, validateEvent } from './responses-schemas.ts'

const ALL = [
  'streaming',
  'tools',
  'parallel_tool_calls',
  'json_mode',
  'json_schema',
  'system_messages',
  'vision',
]
const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 200_000,
  max_output_tokens: 8192,
  features: ALL,
  ...extra,
})

export interface ResponsesBed {
  gw: TestGateway
  mock: MockUpstream
  anthropic: FakeUpstream<string>
  gemini: FakeUpstream<string>
  responses: FakeResponses
  /** A key of an `unlimited` account. */
  key: string
  freshKey(plan?: string): Promise<string>
  client(key?: string): OpenAI
  post(body: unknown, key?: string, headers?: Record<string, string>): Promise<Response>
  /** `usage.by_model[model]` of `GET /v1/usage`, after the recorder has written everything. */
  usageOf(key: string, model: string): Promise<Record<string, number> | undefined>
  stop(): Promise<void>
}

export async function startResponsesBed(
  opts: { plans?: Record<string, unknown> } = {},
): Promise<ResponsesBed> {
  const [mock, anthropic, gemini, responses] = await Promise.all([
    startMockUpstream({ chunks: 4 }),
    startFakeAnthropic({ apiKey: 'sk-ant-test' }),
    startFakeGemini({ apiKey: 'gemini-test' }),
    startFakeResponses({ apiKey: 'sk-oai-test' }),
  ])
  const gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0, stream_hold_ms: 2_000, stream_keepalive_ms: 5_000 },
      usage: { flush_ms: 20 },
      providers: [
        {
          prefix: 'demo',
          kind: 'demo',
          models: [
            model('echo', { unsupported_tools: 'drop', tier: 'free' }),
            model('strict', { features: ['streaming', 'tools', 'system_messages'], tier: 'free' }),
          ],
        },
        {
          prefix: 'openai',
          kind: 'openai',
          base_url: mock.url,
          api_key: 'sk-mock',
          models: [
            model('gpt-4o-mini'),
            model('logprobs', { features: [...ALL, 'logprobs'], upstream_name: 'gpt-4o-mini' }),
          ],
        },
        {
          prefix: 'anthropic',
          kind: 'anthropic',
          base_url: anthropic.url,
          api_key: 'sk-ant-test',
          models: [
            model('text'),
            model('tool'),
            model('stream-error'),
            model('structured'),
            model('two-tools'),
          ],
        },
        {
          prefix: 'gemini',
          kind: 'gemini',
          base_url: gemini.url,
          api_key: 'gemini-test',
          models: [model('text'), model('tool'), model('two-tools')],
        },
        {
          prefix: 'oair',
          kind: 'openai',
          wire: 'responses',
          base_url: `${responses.url}/v1`,
          api_key: 'sk-oai-test',
          models: ['text', 'tool', 'reasoning', 'reasoning-final', 'error'].map((name) =>
            model(name, { features: [...ALL, 'reasoning', 'logprobs'] }),
          ),
        },
      ],
      plans: { ...PLANS, ...opts.plans },
      default_plan: 'unlimited',
    },
  })
  let accounts = 0
  const freshKey = async (plan = 'unlimited') => (await gw.key(`responses-acct-${++accounts}`, plan)).key
  const key = await freshKey()
  return {
    gw,
    mock,
    anthropic,
    gemini,
    responses,
    key,
    freshKey,
    client: (k = key) => new OpenAI({ apiKey: k, baseURL: `${gw.url}/v1`, maxRetries: 0 }),
    post: (body, k = key, headers = {}) =>
      fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    async usageOf(k, id) {
      await gw.deps.recorder.flush()
      const res = await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${k}` } })
      expect(res.status).toBe(200)
      return ((await res.json()) as any).usage.by_model[id]
    },
    async stop() {
      await gw.stop()
      await Promise.all([mock.stop(), anthropic.stop(), gemini.stop(), responses.stop()])
    },
  }
}

/** One parsed SSE event of a Responses stream. */
export interface RawEvent {
  event: string
  data: any
}

/**
 * Reads a whole Responses event stream and checks OpenAI's framing: `event: <type>` naming the
 * data's `type`, one `data:` line, `sequence_number` 0, 1, 2, ...; every event valid against the
 * published schema (`relaxedSchema`: with the live API's documented deviations undone, for
 * pass-through). Comment lines (keep-alives) are skipped.
 */
export async function readResponsesStream(res: Response, relaxedSchema = false): Promise<RawEvent[]> {
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toStartWith('text/event-stream')
  const events: RawEvent[] = []
  for (const frame of (await res.text()).split('\n\n')) {
    const lines = frame.split('\n').filter((line) => line !== '' && !line.startsWith(':'))
    if (lines.length === 0) continue
    expect(lines).toHaveLength(2)
    expect(lines[0]).toStartWith('event: ')
    expect(lines[1]).toStartWith('data: ')
    const data = JSON.parse(lines[1]!.slice(6))
    expect(lines[0]!.slice(7)).toBe(data.type)
    expect(validateEvent(relaxedSchema ? relaxed(data) : data)).toBeNull()
    expect(data.sequence_number).toBe(events.length)
    events.push({ event: data.type, data })
  }
  return events
}
