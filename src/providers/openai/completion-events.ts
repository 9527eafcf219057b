/**
 * @module
 * A chat completion as the event stream it stands for: for an upstream that was asked for a
 * stream and answered one whole JSON completion (it ignored `stream`, as some OpenAI-compatible
 * servers do). The stream's reader (the adapter's decoder, the chat pass-through's relay and its
 * cut under a limit) then reads it as it reads any stream: one chunk a choice with its whole
 * message, its finish reason, then the usage chunk and `[DONE]`.
 *
 * @example
 * const body = completionEvents(asCompletion(await readJson(res, ctx), label))
 * return upstreamPlan(body, ctx, new OpenAIChunkDecoder(label))
 */
import type { ChatCompletion, ChatCompletionChunk } from '../../operations/chat.ts'

/** The SSE body of the chunks `c` streams as (its text, tool calls, reasoning and refusal), usage last. */
export function completionEvents(c: ChatCompletion): ReadableStream<Uint8Array> {
  const head = { id: c.id, object: 'chat.completion.chunk' as const, created: c.created, model: c.model }
  const more = {
    ...(c.system_fingerprint !== undefined ? { system_fingerprint: c.system_fingerprint } : null),
    ...(c.service_tier !== undefined ? { service_tier: c.service_tier } : null),
  }
  const events: string[] = []
  for (const choice of c.choices ?? []) {
    const m = choice.message ?? { role: 'assistant', content: null, refusal: null }
    const delta: ChatCompletionChunk['choices'][number]['delta'] = { role: 'assistant' }
    if (typeof m.content === 'string') delta.content = m.content
    if (typeof m.reasoning_content === 'string') delta.reasoning_content = m.reasoning_content
    if (typeof m.refusal === 'string') delta.refusal = m.refusal
    if (m.tool_calls?.length)
      delta.tool_calls = m.tool_calls.map((t, index) => ({
        index,
        id: t.id,
        type: 'function',
        function: { name: t.function.name, arguments: t.function.arguments },
      }))
    const chunk: ChatCompletionChunk = {
      ...head,
      ...more,
      choices: [
        {
          index: choice.index,
          delta,
          finish_reason: choice.finish_reason,
          logprobs: choice.logprobs ?? null,
        },
      ],
    }
    events.push(`data: ${JSON.stringify(chunk)}\n\n`)
  }
  if (c.usage) events.push(`data: ${JSON.stringify({ ...head, ...more, choices: [], usage: c.usage })}\n\n`)
  events.push('data: [DONE]\n\n')
  const bytes = new TextEncoder().encode(events.join(''))
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes)
      controller.close()
    },
  })
}
