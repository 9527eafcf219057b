/**
 * @module
 * The slice of Anthropic's Messages API wire format that Switchyard writes and reads.
 * Request types are exact (we build them); response and event types are loose on purpose —
 * Anthropic adds block types and fields over time and an unknown one must not break us.
 */

export type AnthropicImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }

/**
 * A prompt-cache breakpoint (`{type: 'ephemeral', ttl?: '5m' | '1h'}`): the prefix up to and
 * including the block that carries it is cached. Passed on as the client wrote it (Anthropic
 * checks it), since new fields and TTLs appear.
 */
export type AnthropicCacheControl = { type: string; [field: string]: unknown }
/** What a block, a tool or a system text may carry besides its own fields. */
type Cacheable = { cache_control?: AnthropicCacheControl }

export type AnthropicTextBlock = { type: 'text'; text: string } & Cacheable
export type AnthropicImageBlock = { type: 'image'; source: AnthropicImageSource } & Cacheable
export type AnthropicDocumentBlock = {
  type: 'document'
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string }
} & Cacheable
export type AnthropicToolUseBlock = {
  type: 'tool_use'
  id: string
  name: string
  input: Record<string, unknown>
} & Cacheable
export type AnthropicToolResultBlock = {
  type: 'tool_result'
  tool_use_id: string
  content: string | Array<AnthropicTextBlock | AnthropicImageBlock>
} & Cacheable

export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock

export interface AnthropicMessage {
  role: 'user' | 'assistant'
  content: AnthropicContentBlock[]
}

export interface AnthropicTool {
  name: string
  description?: string
  input_schema: Record<string, unknown>
  /** Strict tool use: inputs held to `input_schema` by constrained sampling. */
  strict?: boolean
  cache_control?: AnthropicCacheControl
}

export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' }

/** Extended thinking: Anthropic wants 1,024 ≤ `budget_tokens` < `max_tokens`. */
export interface AnthropicThinking {
  type: 'enabled'
  budget_tokens: number
}

export interface AnthropicRequest {
  model: string
  messages: AnthropicMessage[]
  max_tokens: number
  system?: string | AnthropicTextBlock[]
  temperature?: number
  top_p?: number
  top_k?: number
  stop_sequences?: string[]
  tools?: AnthropicTool[]
  tool_choice?: AnthropicToolChoice
  metadata?: { user_id: string }
  thinking?: AnthropicThinking
  /** Structured outputs: the text answer follows this JSON Schema. */
  output_config?: { format?: { type: 'json_schema'; schema: Record<string, unknown> } }
  stream?: boolean
}

/** Token counts as Anthropic reports them; the cache fields are absent on older models. */
export interface AnthropicUsage {
  input_tokens?: number | null
  output_tokens?: number | null
  cache_creation_input_tokens?: number | null
  cache_read_input_tokens?: number | null
  /** The output's breakdown: `thinking_tokens` of `output_tokens` were reasoning. */
  output_tokens_details?: { thinking_tokens?: number | null } | null
}

/** A response content block: text, thinking and tool_use are read, anything else skipped. */
export type AnthropicResponseBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'tool_use'; id: string; name: string; input?: unknown }
  | { type: string; [field: string]: unknown }

export interface AnthropicResponse {
  id: string
  type: 'message'
  role: 'assistant'
  model?: string
  content: AnthropicResponseBlock[]
  stop_reason: string | null
  usage?: AnthropicUsage
}

/** `{type: 'error', error: {type, message}}`: HTTP error bodies and the stream's `error` event. */
export interface AnthropicErrorBody {
  type?: 'error'
  error?: { type?: string; message?: string }
}

/** Data of one Messages stream event, discriminated by `type` (equal to the SSE `event:` name). */
export type AnthropicStreamEvent =
  | { type: 'message_start'; message: { id: string; model?: string; usage?: AnthropicUsage } }
  | { type: 'content_block_start'; index: number; content_block: AnthropicResponseBlock }
  | {
      type: 'content_block_delta'
      index: number
      delta: {
        type: string
        text?: string
        thinking?: string
        partial_json?: string
        [field: string]: unknown
      }
    }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason?: string | null }; usage?: AnthropicUsage }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | ({ type: 'error' } & AnthropicErrorBody)
