/**
 * @module
 * Anthropic Messages stream events → OpenAI `chat.completion.chunk`s, as a `TransformStream`
 * whose state (ids, tool ordinals, usage) lives inside the stream.
 *
 * | Anthropic event                       | chunk(s)                                                   |
 * |---------------------------------------|------------------------------------------------------------|
 * | message_start                         | — (id and input usage remembered)                          |
 * | content_block_start text              | content delta if the block starts with text                |
 * | content_block_start thinking          | `reasoning_content` delta if the block starts with thinking |
 * | content_block_start tool_use          | tool call delta `{index, id, type, function: {name, arguments: ''}}` |
 * | content_block_delta text_delta        | content delta                                              |
 * | content_block_delta thinking_delta    | `reasoning_content` delta                                  |
 * | content_block_delta input_json_delta  | `{index, function: {arguments: partial_json}}`             |
 * | content_block_stop of a tool_use      | `arguments: '{…}'` only if no JSON was streamed for it      |
 * | message_delta                         | — (stop reason and output tokens remembered)               |
 * | message_stop                          | `finish_reason` chunk, then a `choices: []` chunk with usage |
 * | ping, signature_delta, redacted_thinking, unknown events | — (signatures mean nothing off Anthropic) |
 * | error                                 | the stream errors with a `GatewayError` (map-anthropic-error) |
 *
 * The role comes with the first block, as OpenAI sends it (`openingDeltas`): `{role, content: ''}`
 * when the answer opens with text, `content: null` on the first delta when it opens with a tool
 * call or thinking; an answer with no block at all opens with `content: ''` at message_stop.
 *
 * Tool call `index` is the tool's ordinal among the message's tool_use blocks (0-based), not
 * Anthropic's block index, which also counts text and thinking blocks.
 */
import type { ProviderConfig } from '../../config/schema.ts'
import type { ChatCompletionChunk, FinishReason } from '../../operations/chat.ts'
import { invalidResponse, streamInterrupted } from '../http.ts'
import { type ChunkDelta, type ChunkHead, choiceChunk, openingDeltas, usageChunk } from '../shared/chunks.ts'
import { parseJsonEvent } from '../shared/parse-json-event.ts'
import type { SSEEvent } from '../sse/index.ts'
import type { AnthropicStreamEvent, AnthropicUsage } from './anthropic-types.ts'
import { completionId } from './convert-anthropic-response.ts'
import { convertAnthropicUsage, mergeUsage } from './convert-anthropic-usage.ts'
import { mapAnthropicStreamError } from './map-anthropic-error.ts'
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.ts'

interface OpenToolCall {
  ordinal: number
  /** `input` of content_block_start; sent at block stop when no `input_json_delta` carried JSON. */
  input: unknown
  streamedJson: boolean
}

/**
 * @param model the model name to report in chunks (the gateway rewrites it to the prefixed id).
 * @example
 * parseSSE(res.body).pipeThrough(anthropicStreamTransform({ model: 'claude-x', provider }))
 */
export function anthropicStreamTransform(opts: {
  model: string
  provider: ProviderConfig
}): TransformStream<SSEEvent, ChatCompletionChunk> {
  return new TransformStream(anthropicStreamTransformer(opts))
}

/** The same as a transformer object, for a `StreamPlan` stage (state in the closure: one per stream). */
export function anthropicStreamTransformer(opts: {
  model: string
  provider: ProviderConfig
  /** An event that was not JSON was skipped (DESIGN §10: skipped and counted, never passed on). */
  onMalformed?: () => void
}): Transformer<SSEEvent, ChatCompletionChunk> {
  const head: ChunkHead = {
    id: completionId(`msg_${crypto.randomUUID().replaceAll('-', '')}`),
    created: Math.floor(Date.now() / 1000),
    model: opts.model,
  }
  let started = false
  let finished = false
  let events = 0
  let skipped = 0
  let stopReason: string | null | undefined
  const usage: AnthropicUsage = {}
  const tools = new Map<number, OpenToolCall>()

  const chunk = (delta: ChunkDelta, finish: FinishReason | null = null) => choiceChunk(head, 0, delta, finish)

  return {
    transform(sse, controller) {
      if (finished) return
      if (!isJsonObject(sse.data)) {
        skipped++
        opts.onMalformed?.()
        return
      }
      events++
      const event = parseEvent(sse, opts.provider.prefix)
      const emit = (delta: ChunkDelta) => {
        if (started) return controller.enqueue(chunk(delta))
        started = true
        for (const d of openingDeltas(delta)) controller.enqueue(chunk(d))
      }

      switch (event.type) {
        case 'message_start':
          head.id = completionId(event.message.id)
          mergeUsage(usage, event.message.usage)
          return
        case 'content_block_start': {
          const block = event.content_block
          if (block.type === 'text') {
            const text = typeof block.text === 'string' ? block.text : ''
            // An empty start still opens the answer: the role goes out with the block, not its first delta.
            if (text !== '' || !started) emit({ content: text })
          } else if (block.type === 'thinking') {
            const thinking = typeof block.thinking === 'string' ? block.thinking : ''
            if (thinking !== '') emit({ reasoning_content: thinking })
            else if (!started) emit({})
          } else if (block.type === 'tool_use') {
            const ordinal = tools.size
            tools.set(event.index, { ordinal, input: block.input, streamedJson: false })
            emit({
              tool_calls: [
                {
                  index: ordinal,
                  id: String(block.id),
                  type: 'function',
                  function: { name: String(block.name), arguments: '' },
                },
              ],
            })
          }
          return
        }
        case 'content_block_delta': {
          const { delta } = event
          if (delta.type === 'text_delta' && delta.text) emit({ content: delta.text })
          else if (delta.type === 'thinking_delta' && delta.thinking)
            emit({ reasoning_content: delta.thinking })
          else if (delta.type === 'input_json_delta' && delta.partial_json) {
            const tool = tools.get(event.index)
            if (!tool) return
            tool.streamedJson = true
            emit({ tool_calls: [{ index: tool.ordinal, function: { arguments: delta.partial_json } }] })
          }
          return
        }
        case 'content_block_stop': {
          const tool = tools.get(event.index)
          if (tool && !tool.streamedJson) {
            emit({
              tool_calls: [
                { index: tool.ordinal, function: { arguments: JSON.stringify(tool.input ?? {}) } },
              ],
            })
          }
          return
        }
        case 'message_delta':
          stopReason = event.delta?.stop_reason ?? stopReason
          mergeUsage(usage, event.usage)
          return
        case 'message_stop':
          finished = true
          if (!started) emit({ content: '' })
          controller.enqueue(chunk({}, mapAnthropicStopReason(stopReason)))
          controller.enqueue(usageChunk(head, convertAnthropicUsage(usage)))
          return
        case 'error':
          throw mapAnthropicStreamError(event, opts.provider)
        default:
          return // ping, and event types added after this was written
      }
    },
    flush() {
      if (!finished) {
        // Nothing but events that were not JSON: not the protocol at all.
        if (skipped > 0 && events === 0) parseEvent({ data: 'not JSON' }, opts.provider.prefix)
        throw streamInterrupted(opts.provider.prefix, 'the stream ended before message_stop')
      }
    },
  }
}

function isJsonObject(data: string): boolean {
  try {
    const v = JSON.parse(data) as unknown
    return v !== null && typeof v === 'object' && !Array.isArray(v)
  } catch {
    return false
  }
}

function parseEvent(sse: SSEEvent, label: string): AnthropicStreamEvent {
  const data = parseJsonEvent(sse, label)
  if (typeof data.type !== 'string') {
    throw invalidResponse(label, `stream event '${sse.event ?? 'message'}' has no type`)
  }
  return data as AnthropicStreamEvent
}
