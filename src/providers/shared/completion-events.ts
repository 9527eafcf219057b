/**
 * @module
 * A chat completion as the event stream it stands for: for an upstream that was asked for a
 * stream and answered one whole JSON completion (it ignored `stream`, as some OpenAI-compatible
 * servers do). The stream's reader (the adapter's decoder, the chat pass-through's relay and its
 * cut under a limit) then reads it as it reads any stream: each choice's reasoning, text, refusal
 * and tool calls in small pieces (`TextPieces`: so a cut at the output allowance falls inside the
 * text, DESIGN §11; only as far as it may fall), the role on its first chunk, its finish (with its logprobs) last; then the
 * usage chunk and `[DONE]`. A model without `streaming` answering a stream request is read the
 * same way (pipeline/call.ts `wholePlan`), whatever its provider kind.
 *
 * @example
 * const body = completionEvents(asCompletion(await readJson(res, ctx), label), ctx.cutWithin)
 * return upstreamPlan(body, ctx, new OpenAIChunkDecoder(label))
 */
import type { ChatCompletion, ChatCompletionChunk } from '../../operations/chat.ts'
import { eventStream } from './event-stream.ts'
import { TextPieces } from './text-pieces.ts'

type Delta = ChatCompletionChunk['choices'][number]['delta']
type Message = ChatCompletion['choices'][number]['message']

/**
 * The SSE body of the chunks `c` streams as (`completionChunks`), then `[DONE]`, made as it is
 * read; its text in pieces within `cutWithin` output tokens (`TextPieces`).
 */
export function completionEvents(c: ChatCompletion, cutWithin?: number): ReadableStream<Uint8Array> {
  return eventStream(sse(completionChunks(c, new TextPieces(cutWithin))))
}

function* sse(chunks: Iterable<ChatCompletionChunk>): Generator<string> {
  for (const chunk of chunks) yield `data: ${JSON.stringify(chunk)}\n\n`
  yield 'data: [DONE]\n\n'
}

/** The chunks a stream of `c` carries: each choice's deltas, then its finish; the usage chunk last. */
function* completionChunks(c: ChatCompletion, pieces: TextPieces): Generator<ChatCompletionChunk> {
  const head = { id: c.id, object: 'chat.completion.chunk' as const, created: c.created, model: c.model }
  const more = {
    ...(c.system_fingerprint !== undefined ? { system_fingerprint: c.system_fingerprint } : null),
    ...(c.service_tier !== undefined ? { service_tier: c.service_tier } : null),
  }
  for (const choice of c.choices ?? []) {
    const chunk = (delta: Delta, finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null) =>
      ({
        ...head,
        ...more,
        choices: [
          {
            index: choice.index,
            delta,
            finish_reason: finish,
            logprobs: finish === null ? null : (choice.logprobs ?? null),
          },
        ],
      }) satisfies ChatCompletionChunk
    let first = true
    for (const delta of messageDeltas(
      choice.message ?? { role: 'assistant', content: null, refusal: null },
      pieces,
    )) {
      yield chunk(first ? { role: 'assistant', ...delta } : delta)
      first = false
    }
    yield chunk({}, choice.finish_reason)
  }
  if (c.usage) yield { ...head, ...more, choices: [], usage: c.usage }
}

/** A message's generated parts as stream deltas, in the order a stream sends them; at least one. */
function* messageDeltas(m: Message, pieces: TextPieces): Generator<Delta> {
  let any = false
  if (typeof m.reasoning_content === 'string')
    for (const piece of pieces.of(m.reasoning_content)) {
      any = true
      yield { reasoning_content: piece }
    }
  if (typeof m.content === 'string') {
    // An empty text is still the text the answer has (`content: ""`).
    if (m.content === '') yield { content: '' }
    for (const piece of pieces.of(m.content)) yield { content: piece }
    any = true
  }
  if (typeof m.refusal === 'string')
    for (const piece of pieces.of(m.refusal)) {
      any = true
      yield { refusal: piece }
    }
  const calls = m.tool_calls ?? []
  for (let index = 0; index < calls.length; index++) {
    const t = calls[index]!
    let head = true
    for (const piece of pieces.of(t.function.arguments ?? '')) {
      yield head ? call(index, t, piece) : { tool_calls: [{ index, function: { arguments: piece } }] }
      head = false
    }
    if (head) yield call(index, t, '')
    any = true
  }
  if (!any) yield {}
}

const call = (index: number, t: NonNullable<Message['tool_calls']>[number], args: string): Delta => ({
  tool_calls: [{ index, id: t.id, type: 'function', function: { name: t.function.name, arguments: args } }],
})
