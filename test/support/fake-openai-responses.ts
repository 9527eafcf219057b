/**
 * @module
 * A local stand-in for OpenAI's Responses API (`POST /v1/responses`) that replays the recorded
 * responses and streams (`openai-responses-*`), for pass-through tests (`wire: responses`), and
 * answers `POST /v1/responses/input_tokens` with a predictable count (`fakeInputTokens`) and
 * `POST /v1/responses/compact` as OpenAI's compaction does (`fakeCompaction`).
 *
 * Which fixture answers: the request's `model` when it names a fixture, else the one set with
 * `use()` (default `text`). A stream request gets the fixture's events, each framed as
 * `event: <type>\ndata: <line>\n\n` with no `[DONE]`, as the live API sends them; a plain one its
 * `.json`. The reasoning recording holds four responses: one request gets the first (`reasoning`)
 * or the last (`reasoning-final`).
 *
 * @example
 * const fake = await startFakeResponses()
 * // provider: { kind: 'openai', wire: 'responses', base_url: `${fake.url}/v1`, ... }
 * const sent = await fake.frames('text') // the exact bytes the fake streams
 */
import { type FakeUpstream, RECORDED, readLines, replayFrames, serveFake } from './fake-upstream.ts'

interface ResponsesFixture {
  chunks?: URL
  /** Which lines of the recording, 1-based and inclusive (a multi-response recording). */
  lines?: [number, number]
  json?: URL
}

export const RESPONSES_FIXTURES = {
  text: {
    chunks: new URL('openai-responses-text.chunks.txt', RECORDED),
    json: new URL('openai-responses-text.json', RECORDED),
  },
  tool: {
    chunks: new URL('openai-responses-tool.chunks.txt', RECORDED),
    json: new URL('openai-responses-tool.json', RECORDED),
  },
  reasoning: {
    chunks: new URL('openai-responses-reasoning.chunks.txt', RECORDED),
    lines: [1, 56],
    json: new URL('openai-responses-reasoning.json', RECORDED),
  },
  'reasoning-final': { chunks: new URL('openai-responses-reasoning.chunks.txt', RECORDED), lines: [95, 110] },
  error: { chunks: new URL('openai-responses-error.chunks.txt', RECORDED) },
} satisfies Record<string, ResponsesFixture>

export type ResponsesFixtureName = keyof typeof RESPONSES_FIXTURES

export interface FakeResponses extends FakeUpstream<ResponsesFixtureName> {
  /** The SSE frames the fake sends for a stream request answered by `fixture`. */
  frames(fixture: ResponsesFixtureName): Promise<string[]>
}

async function framesOf(name: ResponsesFixtureName): Promise<string[]> {
  const fixture: ResponsesFixture = RESPONSES_FIXTURES[name]
  let lines = await readLines(fixture.chunks!)
  if (fixture.lines) lines = lines.slice(fixture.lines[0] - 1, fixture.lines[1])
  return lines.map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`)
}

/**
 * The fake's count for `POST /v1/responses/input_tokens`: one token per word of the body's
 * `instructions` and `input` text, plus 7 — not a tokenizer, but a number a test can predict and
 * that no local estimate would give. Answered in OpenAI's shape; a body without `model` gets
 * OpenAI's 400, the `error` fixture's model OpenAI's 429 `insufficient_quota`.
 */
export function fakeInputTokens(body: { instructions?: string; input?: unknown }): number {
  const text = `${body.instructions ?? ''} ${JSON.stringify(body.input ?? '')}`
  return 7 + (text.match(/[A-Za-z]+/g)?.length ?? 0)
}

function countInputTokens(body: any): Response {
  if (typeof body?.model !== 'string') {
    return Response.json(
      {
        error: {
          message: 'Missing required parameter: model.',
          type: 'invalid_request_error',
          param: 'model',
          code: 'missing_required_parameter',
        },
      },
      { status: 400 },
    )
  }
  if (body.model === 'error') {
    // The recorded account out of quota: OpenAI refuses every call of it so.
    return Response.json(
      {
        error: {
          message: 'You exceeded your current quota, please check your plan and billing details.',
          type: 'insufficient_quota',
          param: null,
          code: 'insufficient_quota',
        },
      },
      { status: 429 },
    )
  }
  return Response.json({ object: 'response.input_tokens', input_tokens: fakeInputTokens(body) })
}

/**
 * The fake's `POST /v1/responses/compact`: OpenAI's `response.compaction` object — the request's
 * user messages, then one `compaction` item whose opaque `encrypted_content` only the upstream
 * reads (here: the number of input items) — with usage.
 */
export function fakeCompaction(body: { input?: unknown }): Record<string, unknown> {
  const input = Array.isArray(body.input) ? body.input : []
  const users = input.filter((i: any) => i?.role === 'user')
  return {
    id: 'resp_fake_compaction',
    object: 'response.compaction',
    created_at: 1_788_205_800,
    output: [
      ...users.map((u: any, n: number) => ({
        id: `msg_fake_${n}`,
        type: 'message',
        status: 'completed',
        role: 'user',
        content: typeof u.content === 'string' ? [{ type: 'input_text', text: u.content }] : u.content,
      })),
      { id: 'cmp_fake', type: 'compaction', encrypted_content: `fake:${input.length}` },
    ],
    usage: {
      input_tokens: fakeInputTokens(body),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 42,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: fakeInputTokens(body) + 42,
    },
  }
}

/**
 * Members OpenAI's `/v1/responses/compact` has no field for and refuses (its body is `model`,
 * `input`, `instructions`, `previous_response_id`, the prompt-cache fields and `service_tier`;
 * Codex's `tools`, `reasoning`, `text` pass): a cap or a stream flag is a 400 `unknown_parameter`.
 */
const COMPACT_REFUSES = ['max_output_tokens', 'max_tokens', 'max_completion_tokens', 'stream']

function compaction(body: Record<string, unknown>): Response {
  const unknown = COMPACT_REFUSES.find((k) => k in body)
  if (unknown === undefined) return Response.json(fakeCompaction(body))
  return Response.json(
    {
      error: {
        message: `Unknown parameter: '${unknown}'.`,
        type: 'invalid_request_error',
        param: unknown,
        code: 'unknown_parameter',
      },
    },
    { status: 400 },
  )
}

export async function startFakeResponses(
  opts: { fixture?: ResponsesFixtureName; apiKey?: string; eventDelayMs?: number } = {},
): Promise<FakeResponses> {
  const fake = serveFake(
    { fixture: opts.fixture ?? 'text', eventDelayMs: opts.eventDelayMs },
    async (call) => {
      const { request, recorded, url, current, replay } = call
      const counting = url.pathname === '/v1/responses/input_tokens'
      const compacting = url.pathname === '/v1/responses/compact'
      if (request.method !== 'POST' || (url.pathname !== '/v1/responses' && !counting && !compacting)) {
        return Response.json(
          { error: { message: `Not found: ${url.pathname}`, type: 'invalid_request_error' } },
          { status: 404 },
        )
      }
      if (opts.apiKey && request.headers.get('authorization') !== `Bearer ${opts.apiKey}`) {
        return Response.json(
          {
            error: {
              message: 'Incorrect API key provided',
              type: 'invalid_request_error',
              code: 'invalid_api_key',
            },
          },
          { status: 401 },
        )
      }
      if (counting) return countInputTokens(recorded.body)
      if (compacting) return compaction(recorded.body ?? {})
      const model = recorded.body?.model
      const name =
        typeof model === 'string' && model in RESPONSES_FIXTURES ? (model as ResponsesFixtureName) : current
      const fixture: ResponsesFixture = RESPONSES_FIXTURES[name]
      if (recorded.body?.stream !== true) {
        if (!fixture.json)
          return Response.json({ error: { message: 'this fixture only streams' } }, { status: 500 })
        return new Response(await Bun.file(fixture.json).text(), {
          headers: { 'content-type': 'application/json' },
        })
      }
      return new Response(replayFrames(await framesOf(name), replay), {
        headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
      })
    },
  )
  return { ...fake, frames: framesOf }
}
