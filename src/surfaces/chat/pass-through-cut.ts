/**
 * @module
 * The cut at the output allowance (DESIGN §11) on the chat → openai pass-through: under a token or
 * money limit the answer keeps its byte relay (relay-bytes.ts) and this gate counts it. Each
 * upstream event (one Uint8Array, `eventFrames`) is read for its choices' generated text only —
 * its data parsed, nothing re-encoded — and handed to the translated path's own gate
 * (`ChunkGate`, pipeline/output-cut.ts), so the count, the carried whitespace, the growth and the
 * cut are exactly the translated path's. Every event it lets through goes on as the upstream
 * wrote it (the relay swaps only `model`, and withholds the usage chunk a client did not ask for).
 * At the cut, the ending is written as upstream events — a chunk per open choice with
 * `finish_reason: "length"`, the usage chunk (the input as reserved, the output as counted),
 * `[DONE]` — and goes through the same relay, so the client reads what the translated path wrote.
 *
 * A JSON request under a limit is sent upstream as a stream (`streamedChatBody`) and the events,
 * as the gate let them through, put together as the chat completion (`assembleChat`): the same
 * assembly, and the same body, as the translated path's (`completeWithin`), without its
 * canonical request or its adapter.
 *
 * @example
 * const gate = new ChatCutGate(allowance, reservation.tokens - reservation.outputTokens)
 * writeStream({ body, stages: [eventFrames(max, label)], ctx }, relay, { gate })
 */
import type { OutputAllowance } from '../../pipeline/output-allowance.ts'
import { Assembly, ChunkGate } from '../../pipeline/output-cut.ts'
import type { CutGate } from '../../pipeline/stream-writer.ts'
import type { EncodeContext } from '../../pipeline/surface.ts'
import { OpenAIChunkDecoder } from '../../providers/openai/stream.ts'
import type { ChatCompletionChunk, Usage } from '../../providers/types.ts'
import { eventData, eventName } from '../byte-relay.ts'

const utf8 = new TextEncoder()
const DONE_EVENT = utf8.encode('data: [DONE]\n\n')

/** The chunk an event carries, or null (no JSON object with a `choices` array: the relay's to judge). */
function chunkOf(ev: Uint8Array): ChatCompletionChunk | null {
  const buf = Buffer.from(ev.buffer, ev.byteOffset, ev.byteLength)
  const data = eventData(buf, 0, buf.length)
  // Not a chunk: [DONE], an empty event, a comment.
  if (data.charCodeAt(0) !== 123) return null
  try {
    const chunk = JSON.parse(data) as unknown
    if (chunk === null || typeof chunk !== 'object') return null
    return Array.isArray((chunk as { choices?: unknown }).choices) ? (chunk as ChatCompletionChunk) : null
  } catch {
    return null
  }
}

export class ChatCutGate implements CutGate<Uint8Array> {
  private readonly chunks: ChunkGate

  constructor(allowance: OutputAllowance, inputTokens: number) {
    this.chunks = new ChunkGate(allowance, inputTokens)
  }

  get cut(): boolean {
    return this.chunks.cut
  }

  get counted(): number {
    return this.chunks.counted
  }

  admit(ev: Uint8Array): boolean | Promise<boolean> {
    const chunk = chunkOf(ev)
    return chunk === null ? true : this.chunks.admit(chunk)
  }

  ending(): Uint8Array[] {
    const out = this.chunks.ending().map((c) => utf8.encode(`data: ${JSON.stringify(c)}\n\n`))
    out.push(DONE_EVENT)
    return out
  }
}

/**
 * A non-stream forward body asking for a stream with the usage chunk (the gateway settles from
 * it). `stream_options` was removed from the non-stream body (forward-request.ts).
 */
export function streamedChatBody(body: string): string {
  return JSON.stringify({
    ...(JSON.parse(body) as Record<string, unknown>),
    stream: true,
    stream_options: { include_usage: true },
  })
}

/**
 * The chat completion from the stream's events as the gate let them through (its ending
 * included): refused as the translated stream refuses it (`OpenAIChunkDecoder`: an error event,
 * a chunk without choices, an end before `[DONE]` or a finish), then assembled as
 * `completeWithin` assembles it, with the client's model id.
 */
export function assembleChat(
  events: Uint8Array[],
  ctx: EncodeContext<unknown>,
): { body: string; usage: Usage | null } {
  const decoder = new OpenAIChunkDecoder(ctx.provider.prefix)
  const answer = new Assembly()
  const sink = {
    enqueue: (chunk: ChatCompletionChunk) => answer.add(chunk),
  } as TransformStreamDefaultController<ChatCompletionChunk>
  for (const ev of events) {
    const buf = Buffer.from(ev.buffer, ev.byteOffset, ev.byteLength)
    decoder.transform({ event: eventName(buf, 0), data: eventData(buf, 0, buf.length) }, sink)
  }
  decoder.flush()
  const completion = answer.completion()
  completion.model = ctx.modelId
  return { body: JSON.stringify(completion), usage: completion.usage ?? null }
}
