/**
 * @module
 * The bed of the chat-completions end-to-end tests: a real mock upstream, a real gateway in front
 * of it (port 0, temporary database), the official `openai` client, and raw-SSE helpers.
 *
 * Providers: `mock` (every feature model, fault models, default timeouts so a 15 s wait is fine),
 * `mockt` (the same upstream with small timeouts: a `hang` model), `mocks` (a stream silent past its
 * idle timeout), `dead` (a closed port) and `demo`.
 *
 * @example
 * const bed = await startChatBed()
 * const res = await bed.client().chat.completions.create({ model: 'mock/gpt-4o-mini', messages })
 * await bed.stop()
 */
import { expect } from 'bun:test'
import OpenAI from 'openai'
import { type MockUpstream, startMockUpstream } from '../../scripts/mock-upstream.ts'
import { FEATURES, type Feature } from '../../src/config/schema-providers.ts'
import { ADMIN_TOKEN, DEMO_PROVIDER, PLANS, startGateway, type TestGateway } from './gateway.ts'
import { validateError } from './openai-schemas.ts'

/** The provider's key: it must never reach a client. */
export const UPSTREAM_KEY = 'sk-upstream-secret-123'
/** What the mock's models all answer upstream as, unless their name scripts a fault. */
export const UPSTREAM_MODEL = 'gpt-4o-mini'

const model = (name: string, features: readonly Feature[], extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 128_000,
  max_output_tokens: 4096,
  features: [...features],
  ...extra,
})

/** Faults the mock scripts by model name; each is a model with every feature on `mock`. */
export const FAULT_MODELS = [
  'fault-500',
  'fault-429',
  'fault-400',
  'fault-invalid-json',
  'fault-cut-stream',
  'fault-error-event',
  'slow-stream',
  'slow-first-15000ms',
  'slow-first-1000ms',
  'hang',
]

function mockModels() {
  return [
    model(UPSTREAM_MODEL, FEATURES),
    // One model per feature that lacks exactly that feature, and one with none.
    ...FEATURES.map((f) =>
      model(
        `no-${f}`,
        FEATURES.filter((g) => g !== f),
        { upstream_name: UPSTREAM_MODEL },
      ),
    ),
    model('bare', [], { upstream_name: UPSTREAM_MODEL }),
    model('cool', FEATURES, { upstream_name: UPSTREAM_MODEL, temperature: { min: 0, max: 1 } }),
    ...FAULT_MODELS.map((name) => model(name, FEATURES)),
  ]
}

/**
 * A port nothing listens on. Not one freed from a port-0 bind: the kernel may hand that port to
 * any server started afterwards (ours, or another process's), and "refused" becomes some answer.
 */
const CLOSED_PORT = 1

export function chatConfigDoc(mockUrl: string, server: Record<string, unknown> = {}) {
  return {
    server: { host: '127.0.0.1', port: 0, stream_hold_ms: 300, stream_keepalive_ms: 250, ...server },
    admin: { token: ADMIN_TOKEN },
    usage: { flush_ms: 20 },
    // The suites on this bed send hundreds of invalid requests with one key on purpose; that they
    // count toward suspension is tested in hostile-bodies.test.ts.
    limits: { suspension: { count_invalid: false } },
    providers: [
      { prefix: 'mock', kind: 'openai', base_url: mockUrl, api_key: UPSTREAM_KEY, models: mockModels() },
      {
        prefix: 'mockt',
        kind: 'openai',
        base_url: mockUrl,
        api_key: UPSTREAM_KEY,
        // `hang` never answers, so its 504 at first_byte_ms needs no margin a loaded machine eats.
        timeouts: { first_byte_ms: 300, idle_ms: 300, total_ms: 5_000 },
        models: ['hang'].map((name) => model(name, FEATURES)),
      },
      {
        // A stream whose chunks come 2 s apart: the gateway's idle cut (1 s after the first text)
        // comes before the next one, and the first byte need not beat 300 ms on a loaded machine.
        // total_ms is far off, so the cut seen is the idle one.
        prefix: 'mocks',
        kind: 'openai',
        base_url: mockUrl,
        api_key: UPSTREAM_KEY,
        timeouts: { first_byte_ms: 3_000, idle_ms: 1_000, total_ms: 20_000 },
        models: ['slow-stream-2000ms'].map((name) => model(name, FEATURES)),
      },
      {
        prefix: 'dead',
        kind: 'openai',
        base_url: `http://127.0.0.1:${CLOSED_PORT}/v1`,
        api_key: UPSTREAM_KEY,
        models: [model(UPSTREAM_MODEL, FEATURES)],
      },
      DEMO_PROVIDER,
    ],
    plans: PLANS,
    default_plan: 'free',
  }
}

export interface ChatBed {
  gw: TestGateway
  mock: MockUpstream
  /** A key on the `unlimited` plan (no rate limits, every model), made at start. */
  key: string
  /** The official client against the gateway; no retries. */
  client(apiKey?: string, opts?: Partial<ConstructorParameters<typeof OpenAI>[0]>): OpenAI
  /** `POST /v1/chat/completions` with a JSON body (or a raw string) and the bed's key. */
  post(body: unknown, headers?: Record<string, string>, signal?: AbortSignal): Promise<Response>
  stop(): Promise<void>
}

export async function startChatBed(
  opts: { server?: Record<string, unknown>; mockChunks?: number } = {},
): Promise<ChatBed> {
  const mock = await startMockUpstream({ chunks: opts.mockChunks ?? 4 })
  const gw = await startGateway({ doc: chatConfigDoc(mock.url, opts.server) })
  const { key } = await gw.key('e2e', 'unlimited')
  return {
    gw,
    mock,
    key,
    client: (apiKey = key, extra = {}) =>
      new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 20_000, ...extra }),
    post: (body, headers = {}, signal) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
        signal,
      }),
    async stop() {
      await gw.stop()
      await mock.stop()
    },
  }
}

export const userMessage = (content = 'Hello') => [{ role: 'user' as const, content }]

export const WEATHER_TOOLS = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
    },
  },
  {
    type: 'function' as const,
    function: { name: 'get_time', parameters: { type: 'object', properties: {} } },
  },
]

/** One SSE event as sent: a comment (`: ...`) or a data line. */
export type SSEItem = { comment: string } | { data: string }

export interface RawStream {
  items: SSEItem[]
  /** Parsed JSON of every data event but `[DONE]`, in order. */
  events: Array<Record<string, unknown>>
  comments: number
  done: boolean
  text: string
}

/** Splits an SSE body into comments and data events; the gateway writes one line per event. */
export function parseSSEText(text: string): RawStream {
  const items: SSEItem[] = []
  for (const block of text.split('\n\n')) {
    for (const line of block.split('\n')) {
      if (line === '') continue
      if (line.startsWith(':')) items.push({ comment: line.slice(1).trim() })
      else if (line.startsWith('data: ')) items.push({ data: line.slice(6) })
      else throw new Error(`unexpected SSE line: ${line.slice(0, 200)}`)
    }
  }
  const data = items.filter((i): i is { data: string } => 'data' in i).map((i) => i.data)
  const done = data.at(-1) === '[DONE]'
  expect(data.slice(0, -1)).not.toContain('[DONE]')
  return {
    items,
    events: data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as Record<string, unknown>),
    comments: items.length - data.length,
    done,
    text,
  }
}

export async function readSSE(res: Response): Promise<RawStream> {
  expect(res.headers.get('content-type')).toStartWith('text/event-stream')
  return parseSSEText(await res.text())
}

/** Polls until `check()` holds or `ms` passes; returns how long it took. */
export async function waitFor(check: () => boolean, ms: number): Promise<number> {
  const t0 = performance.now()
  while (!check() && performance.now() - t0 < ms) await Bun.sleep(5)
  expect(check()).toBe(true)
  return performance.now() - t0
}

/** Asserts `res` is the gateway's error with that status and code; returns the parsed body. */
export async function expectError(res: Response, status: number, code: string) {
  const text = await res.text()
  expect(text).not.toContain(UPSTREAM_KEY)
  const body = JSON.parse(text) as {
    error: { message: string; type: string; param: string | null; code: string }
  }
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code })
  expect(validateError(body)).toBeNull()
  expect(res.headers.get('content-type')).toStartWith('application/json')
  expect(res.headers.get('x-request-id')).toBeTruthy()
  return body
}
