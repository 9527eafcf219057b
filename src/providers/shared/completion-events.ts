/**
 * @module
 * A chat completion as the event stream it stands for: for an upstream that was asked for a
 * stream and answered one whole JSON completion (it ignored `stream`, as some OpenAI-compatible
 * servers do). The stream's reader (the adapter's decoder, the chat pass-through's relay and its
 * cut under a limit) then reads it as it reads any stream: each choice's reasoning, text, refusal
 * and tool calls in small pieces (`textPieces`: so a cut at the output allowance falls inside the
 * text, DESIGN §11), the role on its first chunk, its finish (with its logprobs) last; then the
 * usage chunk and `[DONE]`. A model without `streaming` answering a stream request is read the
 * same way (pipeline/call.ts `wholePlan`), whatever its provider kind.
 *
 * @example
 * const body = completionEvents(asCompletion(await readJson(res, ctx), label))
 * return upstreamPlan(body, ctx, new OpenAIChunkDecoder(label))
 */
import type { ChatCompletion, ChatCompletionChunk } from '../../operations/chat.ts'
import { textPieces } from './text-pieces.ts'

type Delta = ChatCompletionChunk['choices'][number]['delta']
type Message = ChatCompletion['choices'][number]['message']

/** The SSE body of the chunks `c` streams as (`completionChunks`), then `[DONE]`. */
export function completionEvents(c: ChatCompletion): ReadableStream<Uint8Array> {
  const events = completionChunks(c).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
  events.push('data: [DONE]\n\n')
  return streamOf(new TextEncoder().encode(events.join('')))
}

/** The chunks a stream of `c` carries: each choice's deltas, then its finish; the usage chunk last. */
export function completionChunks(c: ChatCompletion): ChatCompletionChunk[] {
  const head = { id: c.id, object: 'chat.completion.chunk' as const, created: c.created, model: c.model }
  const more = {
    ...(c.system_fingerprint !== undefined ? { system_fingerprint: c.system_fingerprint } : null),
    ...(c.service_tier !== undefined ? { service_tier: c.service_tier } : null),
  }
  const out: ChatCompletionChunk[] = []
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
    const deltas = messageDeltas(choice.message ?? { role: 'assistant', content: null, refusal: null })
    deltas[0] = { role: 'assistant', ...deltas[0] }
    for (const delta of deltas) out.push(chunk(delta))
    out.push(chunk({}, choice.finish_reason))
  }
  if (c.usage) out.push({ ...head, ...more, choices: [], usage: c.usage })
  return out
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes)
      controller.close()
    },
  })
}

/** A message's generated parts as stream deltas, in the order a stream sends them; at least one. */
function messageDeltas(m: Message): Delta[] {
  const out: Delta[] = []
  if (typeof m.reasoning_content === 'string')
    for (const piece of textPieces(m.reasoning_content)) out.push({ reasoning_content: piece })
  if (typeof m.content === 'string') {
    const pieces = textPieces(m.content)
    // An empty text is still the text the answer has (`content: ""`).
    if (pieces.length === 0) out.push({ content: '' })
    for (const piece of pieces) out.push({ content: piece })
  }
  if (typeof m.refusal === 'string') for (const piece of textPieces(m.refusal)) out.push({ refusal: piece })
  m.tool_calls?.forEach((t, index) => {
    const [first = '', ...rest] = textPieces(t.function.arguments ?? '')
    out.push({
      tool_calls: [
        { index, id: t.id, type: 'function', function: { name: t.function.name, arguments: first } },
      ],
    })
    for (const piece of rest) out.push({ tool_calls: [{ index, function: { arguments: piece } }] })
  })
  if (out.length === 0) out.push({})
  return out
}
