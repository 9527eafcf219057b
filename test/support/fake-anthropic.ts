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

import {
  type FakeUpstream,
  type Fixture,
  RECORDED,
  type Replay,
  readLines,
  replayFrames,
  serveFake,
} from './fake-upstream.ts'

const OWN = new URL('../fixtures/anthropic/', import.meta.url)

export const ANTHROPIC_FIXTURES = {
  text: {
    json: new URL('anthropic-text.json', RECORDED),
    chunks: new URL('anthropic-text.chunks.txt', RECORDED),
  },
  tool: {
    json: new URL('anthropic-tool.json', RECORDED),
    chunks: new URL('anthropic-tool.chunks.txt', RECORDED),
  },
  thinking: {
    json: new URL('anthropic-thinking.json', RECORDED),
    chunks: new URL('anthropic-thinking.chunks.txt', RECORDED),
  },
  'two-tools': { json: new URL('two-tools.json', OWN), chunks: new URL('two-tools.chunks.txt', OWN) },
  // A structured output (output_config.format): the text is the JSON.
  structured: { json: new URL('structured.json', OWN), chunks: new URL('structured.chunks.txt', OWN) },
  // Thinking, with the output's breakdown (usage.output_tokens_details.thinking_tokens).
  reasoned: { json: new URL('reasoned.json', OWN), chunks: new URL('reasoned.chunks.txt', OWN) },
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

export type { FakeUpstream, RecordedRequest } from './fake-upstream.ts'

/** What `POST /v1/messages/count_tokens` answers. */
export const FAKE_COUNT_TOKENS = 2095

export async function startFakeAnthropic(
  opts: {
    fixture?: AnthropicFixture
    apiKey?: string
    eventDelayMs?: number
    /** Refuse (400) any request whose `anthropic-beta` header is not exactly this. */
    expectBeta?: string
    /** Answer a request whose last turn carries a `tool_result` with this fixture (ends a tool loop). */
    afterToolResult?: AnthropicFixture
  } = {},
): Promise<FakeUpstream<AnthropicFixture>> {
  return serveFake({ fixture: opts.fixture ?? 'text', eventDelayMs: opts.eventDelayMs }, (call) => {
    const { request, recorded, url, current, replay } = call
    const count = url.pathname === '/v1/messages/count_tokens'
    if (request.method !== 'POST' || (url.pathname !== '/v1/messages' && !count)) {
      return errorResponse(404, 'not_found_error', `Not found: ${request.method} ${url.pathname}`)
    }
    if (opts.apiKey && request.headers.get('x-api-key') !== opts.apiKey) {
      return serveFile(ANTHROPIC_FIXTURES.authentication, false, replay)
    }
    const beta = request.headers.get('anthropic-beta')
    if (opts.expectBeta !== undefined && beta !== opts.expectBeta) {
      return errorResponse(
        400,
        'invalid_request_error',
        `fake-anthropic: anthropic-beta was ${JSON.stringify(beta)}, expected ${JSON.stringify(opts.expectBeta)}`,
      )
    }
    if (count) return Response.json({ input_tokens: FAKE_COUNT_TOKENS })
    const model = recorded.body?.model
    let name =
      typeof model === 'string' && model in ANTHROPIC_FIXTURES ? (model as AnthropicFixture) : current
    const last = recorded.body?.messages?.at?.(-1)?.content
    if (
      opts.afterToolResult &&
      Array.isArray(last) &&
      last.some((b: { type?: string }) => b?.type === 'tool_result')
    ) {
      name = opts.afterToolResult
    }
    return serveFile(ANTHROPIC_FIXTURES[name], recorded.body?.stream === true, replay)
  })
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
  const frames = (await readLines(fixture.chunks)).map(
    (line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`,
  )
  return new Response(replayFrames(frames, replay), {
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
  })
}

function errorResponse(status: number, type: string, message: string): Response {
  return Response.json({ type: 'error', error: { type, message } }, { status })
}
