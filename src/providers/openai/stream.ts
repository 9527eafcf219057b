/**
 * @module
 * Decodes an OpenAI-style event stream into chunks: stops at `data: [DONE]`, turns an
 * `{"error": ...}` event into a `GatewayError`, and refuses what is not a chunk.
 */
import { GatewayError } from '../../util/errors.ts'
import { describeUpstreamError, invalidResponse, sanitizeMessage, streamInterrupted } from '../http.ts'
import type { SSEEvent } from '../sse/index.ts'
import type { ChatCompletionChunk } from '../types.ts'

/** One instance per stream: it remembers whether the stream finished properly. */
export class OpenAIChunkDecoder implements Transformer<SSEEvent, ChatCompletionChunk> {
  private sawDone = false
  private sawFinish = false

  constructor(private readonly label: string) {}

  transform(ev: SSEEvent, controller: TransformStreamDefaultController<ChatCompletionChunk>): void {
    // After [DONE] the upstream ends its body; reading it out keeps the connection reusable.
    if (this.sawDone || ev.data === '') return
    if (ev.data === '[DONE]') {
      this.sawDone = true
      return
    }
    let chunk: unknown
    try {
      chunk = JSON.parse(ev.data)
    } catch {
      throw invalidResponse(this.label, `a stream event is not JSON: ${sanitizeMessage(ev.data, 120)}`)
    }
    if (chunk === null || typeof chunk !== 'object') {
      throw invalidResponse(this.label, 'a stream event is not a JSON object')
    }
    const obj = chunk as Record<string, unknown>
    if (ev.event === 'error' || obj.error != null) throw eventError(this.label, obj)
    const choices = obj.choices
    if (!Array.isArray(choices)) throw invalidResponse(this.label, 'a stream chunk has no choices array')
    for (const choice of choices) if (choice?.finish_reason) this.sawFinish = true
    controller.enqueue(chunk as ChatCompletionChunk)
  }

  flush(): void {
    // Some compatible servers omit [DONE]; an answer that reached its finish_reason is complete.
    if (!this.sawDone && !this.sawFinish)
      throw streamInterrupted(this.label, 'the stream ended before data: [DONE]')
  }
}

export function eventError(label: string, body: Record<string, unknown>): GatewayError {
  const detail = describeUpstreamError(body) ?? 'no details given'
  return new GatewayError(502, 'upstream_error', `Upstream '${label}' failed mid-stream: ${detail}`)
}
