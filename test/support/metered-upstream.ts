/**
 * A real local upstream (Bun.serve on 127.0.0.1, port 0) that streams slowly on all three wires —
 * OpenAI chat (`/v1/chat/completions`), Anthropic Messages (`/v1/messages`) and OpenAI Responses
 * (`/v1/responses`) — and bills as a provider does, for the settlement tests (DESIGN §11).
 *
 * Billing: input = the words of every message's text + 8 per message; output = the request's cap
 * (`max_completion_tokens`, `max_tokens`, `max_output_tokens` by wire), capped at `answerTokens`.
 * One token is `"w "` (2 bytes); the answer goes out 10 tokens per delta, `delayMs` apart.
 *
 * The model name picks the fault: `cut` → the connection is cut after `CUT_AFTER` deltas, before
 * any usage; `early` → cut after the stream's opening events, before any text; anything else
 * streams the whole answer, ending with its usage. Like the providers it refuses a body without
 * the wire's cap name where one is required (Messages' `max_tokens`), or with another wire's.
 *
 * `ignoreCap`: an upstream that answers `answerTokens` whatever cap it is sent, and (Messages)
 * answers a JSON request too, billed for the whole answer. A Messages request with `thinking`
 * gets a thinking block first — one delta of 10 tokens and its `signature_delta`
 * (`THINKING_SIGNATURE`) — then the text block at index 1.
 */
import { inputTokens as billedInput } from './billing-upstream.ts'

export const CUT_AFTER = 3
/** The text of one delta: 10 tokens. */
export const DELTA_TEXT = 'w '.repeat(10)
/** The signature of the thinking block a Messages request with `thinking` gets. */
export const THINKING_SIGNATURE = 'EqQBCkYIBRgCKkBZ3m0sig+/==fake'
/** Output tokens of that thinking block. */
export const THINKING_TOKENS = 10

export interface MeteredUpstream {
  /** Base URL without a path: Anthropic's `base_url`; add `/v1` for OpenAI's. */
  url: string
  /** Per request, in arrival order: what it billed (input, and the output generated so far). */
  bills: Array<{ wire: string; input: number; output: number }>
  /** Per request, in arrival order: the body as it arrived. */
  bodies: Array<Record<string, any>>
  /**
   * With `cutOnRelease`: the `cut` streams waiting after their CUT_AFTER deltas cut their
   * connection (those waiting now; a later one waits for the next call).
   */
  releaseCut(): void
  stop(): Promise<void>
}

type Wire = 'chat' | 'messages' | 'responses'

/** As the billing upstream bills a prompt, for any of the three wires' bodies. */
const inputTokens = (body: Record<string, any>): number =>
  billedInput(
    typeof body.input === 'string' ? [{ content: body.input }] : (body.messages ?? body.input ?? []),
  )

const refuse = (message: string, wire: Wire) =>
  Response.json(
    wire === 'messages'
      ? { type: 'error', error: { type: 'invalid_request_error', message } }
      : { error: { message, type: 'invalid_request_error', param: null, code: 'unsupported_parameter' } },
    { status: 400 },
  )

/** The wire's events around the answer's deltas; `usage` events only in `end`. */
function framing(wire: Wire, model: string, input: number, includeUsage: boolean, thinking = false) {
  const sse = (o: Record<string, unknown>, event?: string) =>
    `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(o)}\n\n`
  if (wire === 'chat') {
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model }
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      sse({
        ...base,
        choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
        ...(includeUsage ? { usage: null } : {}),
      })
    return {
      start: chunk({ role: 'assistant', content: '' }, null),
      delta: (text: string) => chunk({ content: text }, null),
      end: (output: number) =>
        chunk({}, 'length') +
        (includeUsage
          ? sse({
              ...base,
              choices: [],
              usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
            })
          : '') +
        'data: [DONE]\n\n',
    }
  }
  if (wire === 'messages') {
    const text = thinking ? 1 : 0
    const ev = (type: string, o: Record<string, unknown>) => sse({ type, ...o }, type)
    return {
      start:
        ev('message_start', {
          message: {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: input, output_tokens: 1 },
          },
        }) +
        (thinking
          ? ev('content_block_start', {
              index: 0,
              content_block: { type: 'thinking', thinking: '', signature: '' },
            }) +
            ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: DELTA_TEXT } }) +
            ev('content_block_delta', {
              index: 0,
              delta: { type: 'signature_delta', signature: THINKING_SIGNATURE },
            }) +
            ev('content_block_stop', { index: 0 })
          : '') +
        ev('content_block_start', { index: text, content_block: { type: 'text', text: '' } }),
      delta: (t: string) =>
        ev('content_block_delta', { index: text, delta: { type: 'text_delta', text: t } }),
      end: (output: number) =>
        ev('content_block_stop', { index: text }) +
        ev('message_delta', {
          delta: { stop_reason: 'max_tokens', stop_sequence: null },
          usage: { output_tokens: output },
        }) +
        ev('message_stop', {}),
    }
  }
  let seq = 0
  const ev = (type: string, o: Record<string, unknown>) => sse({ type, ...o, sequence_number: seq++ }, type)
  const response = (status: string, usage: unknown) => ({
    id: 'resp_1',
    object: 'response',
    created_at: 1_700_000_000,
    status,
    model,
    output: [],
    usage,
  })
  const at = { item_id: 'msg_1', output_index: 0, content_index: 0 }
  return {
    start:
      ev('response.created', { response: response('in_progress', null) }) +
      ev('response.in_progress', { response: response('in_progress', null) }) +
      ev('response.output_item.added', {
        output_index: 0,
        item: { id: 'msg_1', type: 'message', status: 'in_progress', content: [], role: 'assistant' },
      }) +
      ev('response.content_part.added', { ...at, part: { type: 'output_text', annotations: [], text: '' } }),
    delta: (text: string) => ev('response.output_text.delta', { ...at, delta: text, logprobs: [] }),
    end: (output: number) =>
      ev('response.completed', {
        response: response('incomplete', {
          input_tokens: input,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: input + output,
        }),
      }),
  }
}

export async function startMeteredUpstream(
  opts: {
    answerTokens?: number
    delayMs?: number
    ignoreCap?: boolean
    /**
     * A `cut` stream waits for `releaseCut()` before it cuts, not a fixed pause: a reset drops what
     * the gateway has not read yet (Linux discards a socket's unread bytes on RST), so a test that
     * checks the deltas before the cut all arrived releases it once its client has them.
     */
    cutOnRelease?: boolean
  } = {},
): Promise<MeteredUpstream> {
  const answerTokens = opts.answerTokens ?? 2_000
  const delayMs = opts.delayMs ?? 15
  const bills: MeteredUpstream['bills'] = []
  const bodies: MeteredUpstream['bodies'] = []
  let release = Promise.withResolvers<void>()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      const wire: Wire | null =
        path === '/v1/chat/completions'
          ? 'chat'
          : path === '/v1/messages'
            ? 'messages'
            : path === '/v1/responses'
              ? 'responses'
              : null
      if (req.method !== 'POST' || wire === null)
        return Response.json({ error: { message: 'not found' } }, { status: 404 })
      const body = (await req.json()) as Record<string, any>
      bodies.push(body)
      const json = body.stream !== true
      if (json && !(opts.ignoreCap && wire === 'messages')) return refuse('this upstream only streams', wire)
      const capName =
        wire === 'chat'
          ? body.max_tokens != null
            ? 'max_tokens'
            : 'max_completion_tokens'
          : wire === 'messages'
            ? 'max_tokens'
            : 'max_output_tokens'
      for (const name of ['max_tokens', 'max_completion_tokens', 'max_output_tokens'])
        if (name !== capName && body[name] != null) return refuse(`Unsupported parameter: '${name}'`, wire)
      if (wire === 'messages' && typeof body.max_tokens !== 'number')
        return refuse('max_tokens: Field required', wire)
      // Anthropic's extended thinking: a budget of at least 1,024, below max_tokens, or a 400.
      if (wire === 'messages' && body.thinking?.type === 'enabled') {
        const budget = body.thinking.budget_tokens
        if (typeof budget !== 'number' || budget < 1024)
          return refuse('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024', wire)
        if (budget >= body.max_tokens)
          return refuse('`max_tokens` must be greater than `thinking.budget_tokens`', wire)
      }
      const cap: number = body[capName] ?? answerTokens
      const input = inputTokens(body)
      const total = opts.ignoreCap ? answerTokens : Math.min(cap, answerTokens)
      const thinking = wire === 'messages' && body.thinking?.type === 'enabled'
      const bill = { wire, input, output: thinking ? THINKING_TOKENS : 0 }
      bills.push(bill)
      if (json) {
        bill.output += total
        return Response.json({
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [
            ...(thinking ? [{ type: 'thinking', thinking: DELTA_TEXT, signature: THINKING_SIGNATURE }] : []),
            { type: 'text', text: 'w '.repeat(total) },
          ],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: input, output_tokens: bill.output },
        })
      }
      const f = framing(
        wire,
        String(body.model),
        input,
        body.stream_options?.include_usage === true,
        thinking,
      )
      const enc = new TextEncoder()
      const fault = body.model === 'cut' ? CUT_AFTER : body.model === 'early' ? 0 : -1
      let stopped = false
      const stream = new ReadableStream<Uint8Array>({
        async start(c) {
          c.enqueue(enc.encode(f.start))
          for (let sent = 0, n = 0; sent < total; n++) {
            if (n === fault) {
              // Headers and the deltas so far are out; the connection is cut, no usage sent.
              // Bun writes what was enqueued once the pull settles: let it reach the socket first.
              if (opts.cutOnRelease && fault > 0) await release.promise
              else await Bun.sleep(delayMs + 20)
              // No argument: Bun aborts the connection without logging a reason.
              c.error()
              return
            }
            if (n > 0) await Bun.sleep(delayMs)
            if (stopped) return
            const k = Math.min(10, total - sent)
            c.enqueue(enc.encode(f.delta('w '.repeat(k))))
            sent += k
            bill.output += k
          }
          c.enqueue(enc.encode(f.end(bill.output)))
          c.close()
        },
        cancel() {
          stopped = true
        },
      })
      return new Response(stream, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    bills,
    bodies,
    releaseCut: () => {
      release.resolve()
      release = Promise.withResolvers<void>()
    },
    stop: async () => {
      await server.stop(true)
    },
  }
}
