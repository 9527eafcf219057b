/**
 * @module
 * A local OpenAI Chat Completions upstream (`POST /v1/chat/completions`) whose answers the test
 * writes, for the answer shapes the mock upstream does not make (a refusal, reasoning text, a cut
 * at the token limit, ...): the request's `model` picks the answer; a stream request gets its
 * `chunks` framed as OpenAI frames them (`data: <json>\n\n` each, then `data: [DONE]`), a plain
 * one its `json`. Every request is recorded.
 *
 * @example
 * const up = await startFakeOpenAIChat({ refusal: refusalAnswer(["I can't help", ' with that.']) })
 * // provider config: { kind: 'openai', base_url: `${up.url}/v1`, ... } and a model named `refusal`
 */
import { type FakeUpstream, replayFrames, serveFake } from './fake-upstream.ts'

export interface ChatAnswer {
  /** The `chat.completion.chunk`s of the stream, in order. */
  chunks: Array<Record<string, unknown>>
  /** The `chat.completion` of a plain request. */
  json: Record<string, unknown>
  /**
   * A stream waits before chunk `at` until `until()` resolves (asked once a stream); rejected, the
   * stream fails there (the connection breaks).
   */
  pause?: { at: number; until: () => Promise<unknown> }
}

const HEAD = { id: 'chatcmpl-fake', created: 1_700_000_000, model: 'gpt-4o-2024-08-06' }
const USAGE = {
  prompt_tokens: 20,
  completion_tokens: 9,
  total_tokens: 29,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  ...HEAD,
  object: 'chat.completion.chunk',
  system_fingerprint: 'fp_fake',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
})

/**
 * A Structured Outputs refusal as OpenAI sends it: no content, the reason in `refusal`
 * (`delta.refusal` pieces when streamed), `finish_reason: stop`.
 */
export function refusalAnswer(pieces: string[]): ChatAnswer {
  return {
    chunks: [
      chunk({ role: 'assistant', content: null, refusal: '' }),
      ...pieces.map((refusal) => chunk({ refusal })),
      chunk({}, 'stop'),
      { ...HEAD, object: 'chat.completion.chunk', system_fingerprint: 'fp_fake', choices: [], usage: USAGE },
    ],
    json: {
      ...HEAD,
      object: 'chat.completion',
      system_fingerprint: 'fp_fake',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, refusal: pieces.join(''), annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: USAGE,
    },
  }
}

/**
 * Two parallel tool calls whose deltas interleave by `index`, as OpenAI's wire allows: call 0
 * opens with `{"city":`, call 1 opens, call 0 ends with `"Paris"}`, then call 1's `{"tz":"CET"}`.
 * With `note`: call 1 opens with `{"tz":`, the text `note` comes, then call 1 ends with `"CET"}`
 * and call 0 with `"Paris"}`.
 */
export function interleavedToolCallsAnswer(note?: string): ChatAnswer {
  const call = (index: number, part: Record<string, unknown>) => chunk({ tool_calls: [{ index, ...part }] })
  const opens = (index: number, id: string, name: string) =>
    call(index, { id, type: 'function', function: { name, arguments: '' } })
  const calls = [
    {
      id: 'call_weather',
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    },
    { id: 'call_time', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
  ]
  return {
    chunks: [
      chunk({ role: 'assistant', content: null }),
      opens(0, 'call_weather', 'get_weather'),
      call(0, { function: { arguments: '{"city":' } }),
      opens(1, 'call_time', 'get_time'),
      ...(note === undefined
        ? [
            call(0, { function: { arguments: '"Paris"}' } }),
            call(1, { function: { arguments: '{"tz":"CET"}' } }),
          ]
        : [
            call(1, { function: { arguments: '{"tz":' } }),
            chunk({ content: note }),
            call(1, { function: { arguments: '"CET"}' } }),
            call(0, { function: { arguments: '"Paris"}' } }),
          ]),
      chunk({}, 'tool_calls'),
      { ...HEAD, object: 'chat.completion.chunk', system_fingerprint: 'fp_fake', choices: [], usage: USAGE },
    ],
    json: {
      ...HEAD,
      object: 'chat.completion',
      system_fingerprint: 'fp_fake',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: note ?? null,
            tool_calls: calls,
            refusal: null,
            annotations: [],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: USAGE,
    },
  }
}

/**
 * One tool call (no other to interleave with) whose arguments are split by text: `{"x":`, the text
 * `note`, then `1}`, as OpenAI's wire allows (a choice's deltas carry any of its parts).
 */
export function splitToolCallAnswer(note: string): ChatAnswer {
  const call = (part: Record<string, unknown>) => chunk({ tool_calls: [{ index: 0, ...part }] })
  const whole = interleavedToolCallsAnswer(note)
  const completion = whole.json as { choices: Array<{ message: Record<string, unknown> }> }
  const message = completion.choices[0]!.message
  return {
    chunks: [
      chunk({ role: 'assistant', content: null }),
      call({ id: 'call_x', type: 'function', function: { name: 'set_x', arguments: '' } }),
      call({ function: { arguments: '{"x":' } }),
      chunk({ content: note }),
      call({ function: { arguments: '1}' } }),
      ...whole.chunks.slice(-2),
    ],
    json: {
      ...completion,
      choices: [
        {
          ...completion.choices[0],
          message: {
            ...message,
            tool_calls: [
              { id: 'call_x', type: 'function', function: { name: 'set_x', arguments: '{"x":1}' } },
            ],
          },
        },
      ],
    },
  }
}

/**
 * One tool call whose arguments are whole in their first delta (`{"x":1}`), then the text `notes`
 * in deltas of their own; the stream pauses before its finish until `until()` resolves, so a test
 * sees what reached the client while the answer goes on.
 */
export function callThenTextAnswer(notes: string[], until: () => Promise<unknown>): ChatAnswer {
  const split = splitToolCallAnswer(notes.join(''))
  const chunks = [
    chunk({ role: 'assistant', content: null }),
    chunk({
      tool_calls: [
        { index: 0, id: 'call_x', type: 'function', function: { name: 'set_x', arguments: '{"x":1}' } },
      ],
    }),
    ...notes.map((content) => chunk({ content })),
    ...split.chunks.slice(-2),
  ]
  return { chunks, json: split.json, pause: { at: chunks.length - 2, until } }
}

export async function startFakeOpenAIChat(
  answers: Record<string, ChatAnswer>,
): Promise<FakeUpstream<string>> {
  return serveFake({ fixture: '' }, ({ request, recorded, url, replay }) => {
    if (request.method !== 'POST' || url.pathname !== '/v1/chat/completions') {
      return Response.json(
        { error: { message: 'not found', type: 'invalid_request_error' } },
        { status: 404 },
      )
    }
    const answer = answers[String(recorded.body?.model)]
    if (!answer) {
      return Response.json(
        {
          error: {
            message: `fake-openai-chat: no answer for ${recorded.body?.model}`,
            type: 'invalid_request_error',
          },
        },
        { status: 404 },
      )
    }
    if (recorded.body?.stream !== true) return Response.json(answer.json)
    const frames = [...answer.chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n']
    const pause = answer.pause
    const body = pause
      ? pausedFrames(frames.slice(0, pause.at), pause.until, frames.slice(pause.at))
      : replayFrames(frames, replay)
    return new Response(body, {
      headers: { 'content-type': 'text/event-stream; charset=utf-8' },
    })
  })
}

/** `before`, then — once `until()` resolves — `after`; the stream errors if it rejects. */
function pausedFrames(
  before: string[],
  until: () => Promise<unknown>,
  after: string[],
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(encoder.encode(before.join('')))
      try {
        await until()
      } catch (e) {
        return controller.error(e)
      }
      controller.enqueue(encoder.encode(after.join('')))
      controller.close()
    },
  })
}
