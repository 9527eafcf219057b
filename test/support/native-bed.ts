/**
 * @module
 * The bed of the end-to-end tests of the native-protocol providers (Anthropic, Gemini): fake
 * providers replaying recorded streams, the real gateway in front of them (port 0, temporary
 * database), the official `openai` client, and raw-SSE helpers.
 *
 * Each bed configures one provider kind three times over, each on its own fake:
 * - `<prefix>` — the fake every ordinary test talks to; one model per fixture, named after it;
 * - `<prefix>-slow` — a fake that waits `SLOW_EVENT_MS` before each event (client aborts);
 * - `<prefix>-cold` — a fake only requests the gateway must refuse are sent to, so its
 *   `requests()` proves that nothing reached the provider.
 *
 * @example
 * const bed = await startNativeBed({ prefix: 'anthropic', kind: 'anthropic', start: startFakeAnthropic, ... })
 * const res = await bed.client().chat.completions.create({ model: 'anthropic/text', messages })
 * await bed.stop()
 */
import { expect } from 'bun:test'
import OpenAI, { APIError } from 'openai'
import type { FakeUpstream } from './fake-upstream.ts'
import { ADMIN_TOKEN, PLANS, startGateway, type TestGateway } from './gateway.ts'
import { validateChunk, validateError } from './openai-schemas.ts'

export const SLOW_EVENT_MS = 150

export interface NativeBedOptions<F extends string> {
  prefix: string
  kind: 'anthropic' | 'gemini'
  /** The provider key the fakes demand; a wrong one gets the provider's authentication error. */
  apiKey: string
  start: (opts: { apiKey: string; eventDelayMs?: number }) => Promise<FakeUpstream<F>>
  /** One model per fixture: each model's name is the fixture it replays. */
  fixtures: readonly F[]
  /** What every model declares besides its name. */
  model: { features: string[]; temperature?: { min: number; max: number } }
}

export interface NativeBed<F extends string> {
  gw: TestGateway
  fake: FakeUpstream<F>
  slow: FakeUpstream<F>
  cold: FakeUpstream<F>
  /** A key of an `unlimited` account shared by the tests that do not read usage. */
  key: string
  /** A key of a new `unlimited` account, so that its `/v1/usage` shows one test's requests only. */
  freshKey(): Promise<string>
  /** The official client, without retries (a retried 429 or 5xx would hide the first answer). */
  client(key?: string): OpenAI
  /** `POST /v1/chat/completions` with `fetch`, for reading the raw response. */
  post(body: Record<string, unknown>, key?: string): Promise<Response>
  /** `usage.by_model[model]` of `GET /v1/usage`, after the recorder has written everything. */
  usageOf(key: string, model: string): Promise<Record<string, number> | undefined>
  stop(): Promise<void>
}

export async function startNativeBed<F extends string>(opts: NativeBedOptions<F>): Promise<NativeBed<F>> {
  const [fake, slow, cold] = await Promise.all([
    opts.start({ apiKey: opts.apiKey }),
    opts.start({ apiKey: opts.apiKey, eventDelayMs: SLOW_EVENT_MS }),
    opts.start({ apiKey: opts.apiKey }),
  ])
  const models = opts.fixtures.map((name) => ({
    name,
    context_window: 200_000,
    max_output_tokens: 8192,
    ...opts.model,
  }))
  const provider = (prefix: string, url: string) => ({
    prefix,
    kind: opts.kind,
    base_url: url,
    api_key: opts.apiKey,
    models,
  })
  const gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0, stream_hold_ms: 2_000, stream_keepalive_ms: 5_000 },
      admin: { token: ADMIN_TOKEN },
      usage: { flush_ms: 20 },
      providers: [
        provider(opts.prefix, fake.url),
        provider(`${opts.prefix}-slow`, slow.url),
        provider(`${opts.prefix}-cold`, cold.url),
      ],
      plans: PLANS,
      default_plan: 'unlimited',
    },
  })
  let accounts = 0
  const freshKey = async () => (await gw.key(`${opts.prefix}-acct-${++accounts}`, 'unlimited')).key
  const key = await freshKey()

  return {
    gw,
    fake,
    slow,
    cold,
    key,
    freshKey,
    client: (k = key) => new OpenAI({ apiKey: k, baseURL: `${gw.url}/v1`, maxRetries: 0 }),
    post: (body, k = key) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    async usageOf(k, model) {
      await gw.deps.recorder.flush()
      const res = await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${k}` } })
      expect(res.status).toBe(200)
      return ((await res.json()) as any).usage.by_model[model]
    },
    async stop() {
      await gw.stop()
      await Promise.all([fake.stop(), slow.stop(), cold.stop()])
    },
  }
}

export const userMessage = (text = 'Hello') => [{ role: 'user' as const, content: text }]

export const WEATHER_TOOLS = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
        required: ['city'],
        additionalProperties: false,
      },
    },
  },
]

/** The error a client call rejects with; it must never carry the provider's key. */
export async function rejection(p: Promise<unknown>, providerKey: string): Promise<APIError> {
  const err = await p.then(
    () => {
      throw new Error('expected the call to fail')
    },
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(APIError)
  const apiError = err as APIError
  expect(apiError.message).not.toContain(providerKey)
  expect(JSON.stringify(apiError.error ?? null)).not.toContain(providerKey)
  return apiError
}

export interface RawStream {
  /** Every `data:` payload but `[DONE]`, parsed, in order. */
  events: any[]
  /** `data: [DONE]` ended the stream. */
  done: boolean
}

/**
 * Reads a whole `text/event-stream` response. Every event is checked against OpenAI's schemas:
 * chunks against the chunk schema, an `{error}` event against the error schema. Comment lines
 * (`: keep-alive`) are skipped; any other line kind fails the test.
 */
export async function readRawStream(res: Response): Promise<RawStream> {
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toStartWith('text/event-stream')
  const text = await res.text()
  const events: any[] = []
  let done = false
  for (const frame of text.split('\n\n')) {
    for (const line of frame.split('\n')) {
      if (line === '' || line.startsWith(':')) continue
      expect(line).toStartWith('data: ')
      expect(done).toBe(false) // nothing after [DONE]
      const data = line.slice('data: '.length)
      if (data === '[DONE]') {
        done = true
        continue
      }
      const event = JSON.parse(data)
      expect('error' in event ? validateError(event) : validateChunk(event)).toBeNull()
      events.push(event)
    }
  }
  return { events, done }
}

/**
 * The OpenAI streaming contract for one choice: role in the first delta, `finish_reason` only on
 * the last choice chunk, then (with `include_usage`) one `choices: []` chunk with usage and
 * `usage: null` on every other chunk, then `[DONE]`. Returns the usage chunk.
 */
export function expectOpenAIStreamShape(stream: RawStream, model: string): any {
  const { events, done } = stream
  expect(done).toBe(true)
  for (const chunk of events) {
    expect(chunk.object).toBe('chat.completion.chunk')
    expect(chunk.model).toBe(model)
    expect(chunk.id).toBe(events[0].id)
  }
  const usageChunk = events[events.length - 1]
  const choiceChunks = events.slice(0, -1)
  expect(usageChunk.choices).toEqual([])
  expect(usageChunk.usage).not.toBeNull()
  expect(choiceChunks.length).toBeGreaterThan(1)
  expect(choiceChunks[0].choices[0].delta.role).toBe('assistant')
  for (const chunk of choiceChunks) expect(chunk.usage).toBeNull()
  const finishes = choiceChunks.map((c: any) => c.choices[0].finish_reason)
  expect(finishes.slice(0, -1).every((f: unknown) => f === null)).toBe(true)
  expect(finishes[finishes.length - 1]).not.toBeNull()
  return usageChunk
}

/** Waits until `check` holds, for at most `ms`; true if it did. */
export async function eventually(check: () => boolean, ms = 1_000): Promise<boolean> {
  const until = performance.now() + ms
  while (performance.now() < until) {
    if (check()) return true
    await Bun.sleep(10)
  }
  return check()
}
