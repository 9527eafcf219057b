/**
 * @module
 * A local stand-in for the Gemini API (`POST /v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse` and `:countTokens`) that replays recorded responses and streams, and remembers
 * what it was asked.
 *
 * Which fixture answers: the model in the URL when it names a fixture (so a gateway config can
 * route `gemini/tool` to the `tool` fixture), else the one set with `use()` (default `text`).
 * A stream request gets the fixture's `.chunks.txt` — one JSON response per line, served as
 * `data: <json>\r\n\r\n` as the recordings' README says; a fixture without chunks streams its
 * `.json` as a single event. Error fixtures answer both with their HTTP status and body.
 *
 * @example
 * const fake = await startFakeGemini({ fixture: 'tool', apiKey: 'AIza-test' })
 * // provider config: { kind: 'gemini', base_url: fake.url, api_key: 'AIza-test', ... }
 * fake.lastRequest()?.path // '/v1beta/models/tool:streamGenerateContent?alt=sse'
 * await fake.stop()
 */
import {
  type FakeUpstream,
  type Fixture,
  RECORDED,
  type Replay,
  readLines,
  replayFrames,
  serveFake,
} from './fake-upstream.ts'

export type { FakeUpstream, RecordedRequest } from './fake-upstream.ts'

const OWN = new URL('../fixtures/gemini/', import.meta.url)

export const GEMINI_FIXTURES = {
  text: { json: new URL('gemini-text.json', RECORDED), chunks: new URL('gemini-text.chunks.txt', RECORDED) },
  tool: { json: new URL('gemini-tool.json', RECORDED), chunks: new URL('gemini-tool.chunks.txt', RECORDED) },
  'two-tools': { json: new URL('two-tools.json', OWN), chunks: new URL('two-tools.chunks.txt', OWN) },
  /** Thought summaries (`includeThoughts`), then the answer. */
  thinking: { json: new URL('thinking.json', OWN), chunks: new URL('thinking.chunks.txt', OWN) },
  'stream-error': { chunks: new URL('stream-error.chunks.txt', OWN) },
  truncated: { chunks: new URL('truncated.chunks.txt', OWN) },
  'max-tokens': { chunks: new URL('max-tokens.chunks.txt', OWN) },
  safety: { json: new URL('safety.json', OWN) },
  'prompt-blocked': { json: new URL('prompt-blocked.json', OWN) },
  'invalid-argument': { status: 400, json: new URL('error-invalid-argument.json', OWN) },
  'api-key-invalid': { status: 400, json: new URL('error-api-key-invalid.json', OWN) },
  'permission-denied': { status: 403, json: new URL('error-permission-denied.json', OWN) },
  'not-found': { status: 404, json: new URL('error-not-found.json', OWN) },
  'resource-exhausted': { status: 429, json: new URL('error-resource-exhausted.json', OWN) },
  internal: { status: 500, json: new URL('error-internal.json', OWN) },
  unavailable: { status: 503, json: new URL('error-unavailable.json', OWN) },
} satisfies Record<string, Fixture>

export type GeminiFixture = keyof typeof GEMINI_FIXTURES

const ROUTE = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/

/** What `:countTokens` answers. */
export const FAKE_GEMINI_COUNT = 31

export async function startFakeGemini(
  opts: { fixture?: GeminiFixture; apiKey?: string; eventDelayMs?: number } = {},
): Promise<FakeUpstream<GeminiFixture>> {
  return serveFake({ fixture: opts.fixture ?? 'text', eventDelayMs: opts.eventDelayMs }, (call) => {
    const { request, url, current, replay } = call
    const route = ROUTE.exec(url.pathname)
    if (request.method !== 'POST' || !route) {
      return errorResponse(404, 'NOT_FOUND', `Not found: ${request.method} ${url.pathname}`)
    }
    if (opts.apiKey && request.headers.get('x-goog-api-key') !== opts.apiKey) {
      return serveFile(GEMINI_FIXTURES['api-key-invalid'], false, replay)
    }
    if (route[2] === 'countTokens') return Response.json({ totalTokens: FAKE_GEMINI_COUNT })
    const model = decodeURIComponent(route[1]!)
    const name = model in GEMINI_FIXTURES ? (model as GeminiFixture) : current
    const stream = route[2] === 'streamGenerateContent'
    if (stream && url.searchParams.get('alt') !== 'sse') {
      return errorResponse(400, 'INVALID_ARGUMENT', 'fake-gemini streams only with ?alt=sse')
    }
    return serveFile(GEMINI_FIXTURES[name], stream, replay)
  })
}

async function serveFile(fixture: Fixture, stream: boolean, replay: Replay): Promise<Response> {
  if (fixture.status !== undefined || !stream) {
    if (!fixture.json) return errorResponse(500, 'INTERNAL', 'fake-gemini: this fixture only streams')
    return new Response(await Bun.file(fixture.json).text(), {
      status: fixture.status ?? 200,
      headers: { 'content-type': 'application/json; charset=UTF-8' },
    })
  }
  const lines = fixture.chunks
    ? await readLines(fixture.chunks)
    : [JSON.stringify(await Bun.file(fixture.json!).json())]
  const frames = lines.map((line) => `data: ${line}\r\n\r\n`)
  return new Response(replayFrames(frames, replay), { headers: { 'content-type': 'text/event-stream' } })
}

function errorResponse(code: number, status: string, message: string): Response {
  return Response.json({ error: { code, message, status } }, { status: code })
}
