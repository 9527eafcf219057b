/**
 * @module
 * Decodes an OpenAI-style event stream into chunks: stops at `data: [DONE]`, turns an
 * `{"error": ...}` event into a `GatewayError`, and refuses a chunk without choices. An event that
 * is not JSON is skipped and counted (`onMalformed`), never passed on (DESIGN §10); a stream of
 * nothing but such events is not the protocol at all (502 `upstream_invalid_response`).
 */
import type { ChatCompletionChunk } from '../../operations/chat.ts'
import type { GatewayError } from '../../util/errors.ts'
import { errorCodeOf } from '../failure-facts.ts'
import { describeUpstreamError, inBandError, invalidResponse, streamInterrupted } from '../http.ts'
import type { SSEEvent } from '../sse/index.ts'

/** One instance per stream: it remembers whether the stream finished properly. */
export class OpenAIChunkDecoder implements Transformer<SSEEvent, ChatCompletionChunk> {
  private sawDone = false
  private sawFinish = false
  private chunks = 0
  private skipped = 0

  constructor(
    private readonly label: string,
    private readonly onMalformed?: () => void,
  ) {}

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
      this.skipped++
      this.onMalformed?.()
      return
    }
    if (chunk === null || typeof chunk !== 'object') {
      throw invalidResponse(this.label, 'a stream event is not a JSON object')
    }
    const obj = chunk as Record<string, unknown>
    if (ev.event === 'error' || obj.error != null) throw eventError(this.label, obj)
    const choices = obj.choices
    if (!Array.isArray(choices)) throw invalidResponse(this.label, 'a stream chunk has no choices array')
    for (const choice of choices) if (choice?.finish_reason) this.sawFinish = true
    this.chunks++
    controller.enqueue(chunk as ChatCompletionChunk)
  }

  flush(): void {
    // Some compatible servers omit [DONE]; an answer that reached its finish_reason is complete.
    if (!this.sawDone && !this.sawFinish) {
      if (this.skipped > 0 && this.chunks === 0) throw invalidResponse(this.label, 'no stream event was JSON')
      throw streamInterrupted(this.label, 'the stream ended before data: [DONE]')
    }
  }
}

/**
 * An upstream's in-band error event (`{"error": …}`): mapped by its code as an error status's would
 * be (`inBandError`: `insufficient_quota` is a billing error and rests the key), else 502.
 */
export function eventError(label: string, body: Record<string, unknown>): GatewayError {
  return inBandError(
    label,
    describeUpstreamError(body) ?? 'no details given',
    errorCodeOf(body),
    ' mid-stream',
  )
}
