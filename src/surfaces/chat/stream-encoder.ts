/**
 * @module
 * Chat Completions streams as OpenAI sends them: each chunk as `data: <json>` with the gateway's
 * model id, `: keep-alive` comments, `data: [DONE]` at the end, `data: {"error": ...}` after a
 * failure. The final `choices: []` usage chunk reaches the client only when it asked for it
 * (`stream_options.include_usage`); the usage record gets it either way.
 *
 * @example
 * const out = await writeStream(plan, new ChatChunkEncoder('openai/gpt-4o-mini', false), {
 *   keepaliveMs: 15_000, holdMs: 10_000, signal: request.signal, onFinish: (r) => record(r),
 * })
 */
import type { ChatCompletionChunk, Usage } from '../../operations/chat.ts'
import type { StreamEncoder } from '../../pipeline/stream/encoder.ts'
import { encodeSSE } from '../../providers/sse/index.ts'
import { chunkTextBytes } from '../../usage/estimate.ts'
import type { GatewayError } from '../../util/errors.ts'

/** Shared by every stream: the hot path allocates no encoder and no constant frames. */
const text = new TextEncoder()
export const KEEPALIVE = text.encode(': keep-alive\n\n')
export const DONE = text.encode('data: [DONE]\n\n')

export class ChatChunkEncoder implements StreamEncoder<ChatCompletionChunk> {
  readonly keepalive = KEEPALIVE
  private seen: Usage | null = null
  private relayed = 0

  /**
   * @param modelId the id the client asked for (`prefix/model`); replaces the upstream's `model`.
   * @param includeUsage forward the final `choices: []` usage chunk.
   */
  constructor(
    private readonly modelId: string,
    private readonly includeUsage: boolean,
  ) {}

  encode(chunk: ChatCompletionChunk): Uint8Array | null {
    const out = this.encodeText(chunk)
    return out === null ? null : text.encode(out)
  }

  encodeText(chunk: ChatCompletionChunk): string | null {
    if (chunk.usage) this.seen = chunk.usage
    const { includeUsage } = this
    if (!includeUsage && chunk.choices.length === 0 && chunk.usage) return null
    chunk.model = this.modelId
    // OpenAI's shape: `usage: null` on every chunk with include_usage, no `usage` key without it.
    chunk.usage = includeUsage ? (chunk.usage ?? null) : undefined
    this.relayed += chunkTextBytes(chunk)
    // JSON.stringify never writes a raw line break: one data line, no scan for one.
    return `data: ${JSON.stringify(chunk)}\n\n`
  }

  relayedBytes(): number {
    return this.relayed
  }

  end(): Uint8Array {
    return DONE
  }

  error(err: GatewayError): Uint8Array {
    return text.encode(encodeSSE(JSON.stringify(err.toBody())))
  }

  usage(): Usage | null {
    return this.seen
  }
}
