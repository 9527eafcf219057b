/**
 * @module
 * The bodies the fault-injecting upstream (`fault-upstream.ts`) sends, per wire, built from the
 * recorded provider streams as templates (`test/fixtures/reference/recorded/`): an answer is a
 * list of text pieces ("words"), and a stream is split into `head` (everything before the first
 * content-bearing event: OpenAI's role-only chunk, Anthropic's `message_start` … `ping`, the
 * Responses `response.created` … `content_part.added`), one frame per piece, and `tail` (finish,
 * usage, the terminal event), so a fault can be placed between any two of them. Errors are in
 * each provider's own shape (`{"error": {message, type, param, code}}` for OpenAI,
 * `{"type": "error", "error": {type, message}}` for Anthropic).
 *
 * @example
 * const w = await wireBodies('messages')
 * const s = w.stream({ model: 'claude-x', pieces: answerPieces(6), stop: 'end_turn' })
 * // s.head, s.pieces (one SSE frame per word), s.tail
 */
import { RECORDED, readLines } from './fake-upstream.ts'

export type Wire = 'chat' | 'messages' | 'responses'

/** The request path of each wire (the base URL may or may not end in `/v1`). */
export const WIRE_PATHS: Record<string, Wire> = {
  '/v1/chat/completions': 'chat',
  '/chat/completions': 'chat',
  '/v1/messages': 'messages',
  '/messages': 'messages',
  '/v1/responses': 'responses',
  '/responses': 'responses',
}

export const PROMPT_TOKENS = 10

/** OpenAI's words for an exhausted quota (the recorded Responses failure says the same). */
const QUOTA_MESSAGE = 'You exceeded your current quota, please check your plan and billing details.'

/** `["w1", " w2", …, " wN."]`: distinct words, so a test can see a piece sent twice or lost. */
export function answerPieces(words: number): string[] {
  return Array.from(
    { length: words },
    (_, i) => `${i === 0 ? '' : ' '}w${i + 1}${i === words - 1 ? '.' : ''}`,
  )
}

export interface Answer {
  model: string
  pieces: string[]
  /** Anthropic's `stop_reason` (`end_turn`, `refusal`); the OpenAI wires always finish with `stop`. */
  stop?: string
  /** Chat: `stream_options.include_usage` was set. */
  includeUsage?: boolean
  /** Chat: the words are followed by a call of `TOOL_CALL` (the other wires answer text only). */
  toolCall?: boolean
}

/** The tool call a chat answer makes when scripted with `toolCall`, its arguments in pieces. */
export const TOOL_CALL = { id: 'call_fault', name: 'weather', arguments: ['{"ci', 'ty":"Pa', 'ris"}'] }

export interface StreamFrames {
  head: string[]
  pieces: string[]
  tail: string[]
}

export interface WireBodies {
  stream(a: Answer): StreamFrames
  json(a: Answer): string
  /** A frame that is not valid JSON where the wire expects it, carrying no text. */
  malformed: string
  /** The tail frame that says "no more events": chat's `[DONE]`; none on the other wires. */
  done: string | null
  /**
   * The frames of an in-band out-of-quota failure (HTTP 200), sent after the `seq` events before
   * it (Responses numbers its events); null where the provider has none (Anthropic).
   */
  quota: ((a: Answer, seq: number) => string[]) | null
  error(status: number, type: string, message: string, code?: string | null, param?: string | null): string
}

const sse = (data: unknown, event?: string) =>
  `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`

function chatWire(): WireBodies {
  const created = 1_750_000_000
  const chunk = (a: Answer, delta: Record<string, unknown>, finish: string | null = null) => {
    const c: Record<string, unknown> = {
      id: 'chatcmpl-fault',
      object: 'chat.completion.chunk',
      created,
      model: a.model,
      system_fingerprint: 'fp_fault',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    }
    if (a.includeUsage) c.usage = null
    return sse(c)
  }
  const usage = (a: Answer) => ({
    prompt_tokens: PROMPT_TOKENS,
    completion_tokens: a.pieces.length,
    total_tokens: PROMPT_TOKENS + a.pieces.length,
  })
  const call = (a: Answer) =>
    a.toolCall
      ? [
          chunk(a, {
            tool_calls: [
              {
                index: 0,
                id: TOOL_CALL.id,
                type: 'function',
                function: { name: TOOL_CALL.name, arguments: '' },
              },
            ],
          }),
          ...TOOL_CALL.arguments.map((args) =>
            chunk(a, { tool_calls: [{ index: 0, function: { arguments: args } }] }),
          ),
        ]
      : []
  return {
    stream: (a) => ({
      head: [chunk(a, { role: 'assistant', content: '', refusal: null })],
      pieces: [...a.pieces.map((content) => chunk(a, { content })), ...call(a)],
      tail: [
        chunk(a, {}, a.toolCall ? 'tool_calls' : 'stop'),
        ...(a.includeUsage
          ? [
              sse({
                id: 'chatcmpl-fault',
                object: 'chat.completion.chunk',
                created,
                model: a.model,
                choices: [],
                usage: usage(a),
              }),
            ]
          : []),
        'data: [DONE]\n\n',
      ],
    }),
    json: (a) =>
      JSON.stringify({
        id: 'chatcmpl-fault',
        object: 'chat.completion',
        created,
        model: a.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: a.pieces.join(''), refusal: null, annotations: [] },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: usage(a),
        system_fingerprint: 'fp_fault',
      }),
    malformed:
      'data: {"id":"chatcmpl-fault","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"cont\n\n',
    done: 'data: [DONE]\n\n',
    // As OpenAI's chat API fails a stream in-band: an error object where a chunk would be.
    quota: () => [
      sse({
        error: {
          message: QUOTA_MESSAGE,
          type: 'insufficient_quota',
          param: null,
          code: 'insufficient_quota',
        },
      }),
    ],
    error: (_status, type, message, code = null, param = null) =>
      JSON.stringify({ error: { message, type, param, code } }),
  }
}

async function messagesWire(): Promise<WireBodies> {
  const lines = (await readLines(new URL('anthropic-text.chunks.txt', RECORDED))).map((l) => JSON.parse(l))
  const of = (type: string) => lines.find((l) => l.type === type)
  const start = of('message_start')
  const delta = of('content_block_delta')
  const messageDelta = of('message_delta')
  const message = JSON.parse(await Bun.file(new URL('anthropic-text.json', RECORDED)).text())
  const ev = (e: { type: string }) => sse(e, e.type)
  return {
    stream: (a) => ({
      head: [
        ev({
          ...start,
          message: {
            ...start.message,
            model: a.model,
            usage: { ...start.message.usage, input_tokens: PROMPT_TOKENS },
          },
        }),
        ev(of('content_block_start')),
        ev(of('ping')),
      ],
      pieces: a.pieces.map((text) => ev({ ...delta, delta: { ...delta.delta, text } })),
      tail: [
        ev(of('content_block_stop')),
        ev({
          ...messageDelta,
          delta: { ...messageDelta.delta, stop_reason: a.stop ?? 'end_turn' },
          usage: { ...messageDelta.usage, input_tokens: PROMPT_TOKENS, output_tokens: a.pieces.length },
        }),
        ev(of('message_stop')),
      ],
    }),
    json: (a) =>
      JSON.stringify({
        ...message,
        model: a.model,
        content: [{ type: 'text', text: a.pieces.join('') }],
        stop_reason: a.stop ?? 'end_turn',
        usage: { ...message.usage, input_tokens: PROMPT_TOKENS, output_tokens: a.pieces.length },
      }),
    malformed:
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_del\n\n',
    done: null,
    quota: null,
    error: (_status, type, message) =>
      JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_fault' }),
  }
}

async function responsesWire(): Promise<WireBodies> {
  const lines = (await readLines(new URL('openai-responses-text.chunks.txt', RECORDED))).map((l) =>
    JSON.parse(l),
  )
  const of = (type: string) => lines.find((l) => l.type === type)
  const failure = (await readLines(new URL('openai-responses-error.chunks.txt', RECORDED))).map((l) =>
    JSON.parse(l),
  )
  const json = JSON.parse(await Bun.file(new URL('openai-responses-text.json', RECORDED)).text())
  const usage = (a: Answer) => ({
    input_tokens: PROMPT_TOKENS,
    input_tokens_details: { cache_write_tokens: 0, cached_tokens: 0 },
    output_tokens: a.pieces.length,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: PROMPT_TOKENS + a.pieces.length,
  })
  const withText = (item: any, text: string) => ({
    ...item,
    content: item.content.map((p: any) => ({ ...p, text })),
  })
  return {
    stream: (a) => {
      const text = a.pieces.join('')
      let seq = 0
      const ev = (e: Record<string, unknown>) => sse({ ...e, sequence_number: seq++ }, e.type as string)
      const model = (e: any) => ({ ...e, response: { ...e.response, model: a.model } })
      const head = [
        ev(model(of('response.created'))),
        ev(model(of('response.in_progress'))),
        ev(of('response.output_item.added')),
        ev(of('response.content_part.added')),
      ]
      const delta = of('response.output_text.delta')
      const pieces = a.pieces.map((d) => ev({ ...delta, delta: d }))
      const done = of('response.output_item.done')
      const completed = of('response.completed')
      const tail = [
        ev({ ...of('response.output_text.done'), text }),
        ev({ ...of('response.content_part.done'), part: { ...of('response.content_part.done').part, text } }),
        ev({ ...done, item: withText(done.item, text) }),
        ev({
          ...completed,
          response: {
            ...completed.response,
            model: a.model,
            output: completed.response.output.map((i: any) => withText(i, text)),
            usage: usage(a),
          },
        }),
      ]
      return { head, pieces, tail }
    },
    json: (a) =>
      JSON.stringify({
        ...json,
        model: a.model,
        output: json.output.map((i: any) => withText(i, a.pieces.join(''))),
        usage: usage(a),
      }),
    malformed: 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"x\n\n',
    done: null,
    // The recording's `error` and `response.failed` events, numbered on from the events before them.
    quota: (a, seq) =>
      failure
        .filter((e) => e.type === 'error' || e.type === 'response.failed')
        .map((e, i) => {
          const numbered = { ...e, sequence_number: seq + i }
          if (e.type === 'response.failed') numbered.response = { ...e.response, model: a.model }
          return sse(numbered, e.type)
        }),
    error: (_status, type, message, code = null, param = null) =>
      JSON.stringify({ error: { message, type, param, code } }),
  }
}

const cache = new Map<Wire, Promise<WireBodies>>()

/** The bodies of one wire (templates read once per process). */
export function wireBodies(wire: Wire): Promise<WireBodies> {
  let w = cache.get(wire)
  if (!w) {
    w = wire === 'chat' ? Promise.resolve(chatWire()) : wire === 'messages' ? messagesWire() : responsesWire()
    cache.set(wire, w)
  }
  return w
}

/**
 * The assistant text a request ends with (assistant prefill), on any wire; null when its last
 * turn is not the assistant's.
 */
export function trailingAssistantText(wire: Wire, body: any): string | null {
  const turns = wire === 'responses' ? (Array.isArray(body?.input) ? body.input : []) : body?.messages
  const last = Array.isArray(turns) ? turns[turns.length - 1] : undefined
  if (last?.role !== 'assistant') return null
  const c = last.content
  if (typeof c === 'string') return c
  if (!Array.isArray(c)) return null
  return c
    .filter((p: any) => typeof p?.text === 'string')
    .map((p: any) => p.text)
    .join('')
}

/**
 * What is left of `pieces` after `prefix` (a model continuing its own answer): the pieces past it,
 * the first one cut where the prefix ends inside it. All of them when `prefix` is not the
 * answer's beginning (a model asked to continue text it did not write starts afresh).
 */
export function remainingPieces(pieces: string[], prefix: string): string[] {
  if (!pieces.join('').startsWith(prefix)) return pieces
  const out: string[] = []
  let at = 0
  for (const p of pieces) {
    const end = at + p.length
    if (end > prefix.length) out.push(at >= prefix.length ? p : p.slice(prefix.length - at))
    at = end
  }
  return out
}
