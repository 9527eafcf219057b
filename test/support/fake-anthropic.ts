/**
 * @module
 * A local stand-in for Anthropic's Messages API (`POST /v1/messages`) that replays recorded
 * responses and streams, and remembers what it was asked.
 *
 * Which fixture answers: the request's `model` when it names a fixture (so a gateway config can
 * route `anthropic/tool` to the `tool` fixture), else the one set with `use()` (default `text`).
 * A stream request gets the fixture's `.chunks.txt` — one JSON event per line, served as
 * `event: <type>\ndata: <json>\n\n` as the recordings' README says — and a plain one its `.json`.
 * Error fixtures answer both with their HTTP status and body.
 *
 * @example
 * const fake = await startFakeAnthropic({ fixture: 'tool', apiKey: 'sk-ant-test' })
 * // provider config: { kind: 'anthropic', base_url: fake.url, api_key: 'sk-ant-test', ... }
 * fake.lastRequest()?.body.messages
 * await fake.stop()
 */

const RECORDED = new URL('../../../shared/reference/recorded/', import.meta.url)
const OWN = new URL('../fixtures/anthropic/', import.meta.url)

interface Fixture {
  json?: URL
  chunks?: URL
  /** HTTP status for error fixtures (their `json` is the error body). */
  status?: number
  headers?: Record<string, string>
}

export const ANTHROPIC_FIXTURES = {
  text: {
    json: new URL('anthropic-text.json', RECORDED),
    chunks: new URL('anthropic-text.chunks.txt', RECORDED),
  },
  tool: {
    json: new URL('anthropic-tool.json', RECORDED),
    chunks: new URL('anthropic-tool.chunks.txt', RECORDED),
  },
  'two-tools': { json: new URL('two-tools.json', OWN), chunks: new URL('two-tools.chunks.txt', OWN) },
  'stream-error': { chunks: new URL('stream-error.chunks.txt', OWN) },
  truncated: { chunks: new URL('truncated.chunks.txt', OWN) },
  'invalid-request': { status: 400, json: new URL('error-invalid-request.json', OWN) },
  authentication: { status: 401, json: new URL('error-authentication.json', OWN) },
  permission: { status: 403, json: new URL('error-permission.json', OWN) },
  'not-found': { status: 404, json: new URL('error-not-found.json', OWN) },
  'rate-limit': { status: 429, json: new URL('error-rate-limit.json', OWN), headers: { 'retry-after': '7' } },
  'api-error': { status: 500, json: new URL('error-api.json', OWN) },
  overloaded: { status: 529, json: new URL('error-overloaded.json', OWN) },
} satisfies Record<string, Fixture>

export type AnthropicFixture = keyof typeof ANTHROPIC_FIXTURES

export interface RecordedRequest {
  method: string
  /** Path and query, e.g. `/v1/messages`. */
  path: string
  /** Lower-case header names. */
  headers: Record<string, string>
  body: any
}

export interface FakeUpstream<F extends string> {
  /** Base URL to put in the provider's `base_url`. */
  url: string
  lastRequest(): RecordedRequest | undefined
  requests(): RecordedRequest[]
  /** The fixture for requests whose model is not a fixture name. */
  use(fixture: F): void
  /** Streams the client cancelled (disconnected) before their last event. */
  cancelledStreams(): number
  stop(): Promise<void>
}

export async function startFakeAnthropic(
  opts: { fixture?: AnthropicFixture; apiKey?: string; eventDelayMs?: number } = {},
): Promise<FakeUpstream<AnthropicFixture>> {
  let current: AnthropicFixture = opts.fixture ?? 'text'
  const seen: RecordedRequest[] = []
  const streams = { cancelled: 0 }

  const replay: Replay = {
    delayMs: opts.eventDelayMs ?? 0,
    onCancel: () => {
      streams.cancelled++
    },
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const text = await request.text()
      let body: any
      try {
        body = JSON.parse(text)
      } catch {
        body = text
      }
      seen.push({
        method: request.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(request.headers),
        body,
      })

      if (request.method !== 'POST' || url.pathname !== '/v1/messages') {
        return errorResponse(404, 'not_found_error', `Not found: ${request.method} ${url.pathname}`)
      }
      if (opts.apiKey && request.headers.get('x-api-key') !== opts.apiKey) {
        return serveFile(ANTHROPIC_FIXTURES.authentication, false, replay)
      }
      const name = typeof body?.model === 'string' && body.model in ANTHROPIC_FIXTURES ? body.model : current
      return serveFile(ANTHROPIC_FIXTURES[name as AnthropicFixture], body?.stream === true, replay)
    },
  })

  return {
    url: `http://127.0.0.1:${server.port}`,
    lastRequest: () => seen[seen.length - 1],
    requests: () => [...seen],
    use: (fixture) => {
      current = fixture
    },
    cancelledStreams: () => streams.cancelled,
    stop: async () => {
      await server.stop(true)
    },
  }
}

interface Replay {
  /** Pause before each event, to hold a stream open (e.g. to test cancellation). */
  delayMs: number
  onCancel: () => void
}

async function serveFile(fixture: Fixture, stream: boolean, replay: Replay): Promise<Response> {
  if (fixture.status !== undefined || !stream) {
    if (!fixture.json) return errorResponse(500, 'api_error', 'fake-anthropic: this fixture only streams')
    return new Response(await Bun.file(fixture.json).text(), {
      status: fixture.status ?? 200,
      headers: { 'content-type': 'application/json', ...fixture.headers },
    })
  }
  if (!fixture.chunks) return errorResponse(500, 'api_error', 'fake-anthropic: this fixture does not stream')
  const lines = (await Bun.file(fixture.chunks).text()).split('\n').filter((line) => line.trim() !== '')
  const encoder = new TextEncoder()
  // One event per pull, so the client sees them arrive separately as over a real connection.
  const events = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (replay.delayMs) await Bun.sleep(replay.delayMs)
      const line = lines.shift()
      if (line === undefined) return controller.close()
      const type = (JSON.parse(line) as { type: string }).type
      controller.enqueue(encoder.encode(`event: ${type}\ndata: ${line}\n\n`))
    },
    cancel: replay.onCancel,
  })
  return new Response(events, {
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
  })
}

function errorResponse(status: number, type: string, message: string): Response {
  return Response.json({ type: 'error', error: { type, message } }, { status })
}
