/**
 * @module
 * The chat operation's canonical request, completion, chunk and usage: what every chat surface
 * decodes to and encodes from, and what a provider adapter takes and answers. It is OpenAI's chat
 * completions wire (`POST /v1/chat/completions`), so the chat surface is the identity codec and the
 * Messages and Responses surfaces translate.
 *
 * @example
 * const req: ChatRequest = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 64 }
 * const completion: ChatCompletion = await adapter.complete(req, ctx)
 * completion.choices[0]!.message.content // the answer
 */

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool'

export interface TextPart {
  type: 'text'
  text: string
}
export interface ImagePart {
  type: 'image_url'
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' }
}
export interface AudioPart {
  type: 'input_audio'
  input_audio: { data: string; format: string }
}
export interface FilePart {
  type: 'file'
  file: Record<string, unknown>
}
export type ContentPart = TextPart | ImagePart | AudioPart | FilePart | { type: 'refusal'; refusal: string }

export interface ToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export interface ChatMessage {
  role: Role
  content?: string | ContentPart[] | null
  name?: string
  tool_calls?: ToolCall[]
  tool_call_id?: string
  [extra: string]: unknown
}

export interface FunctionTool {
  type: 'function'
  function: {
    name: string
    description?: string
    parameters?: Record<string, unknown>
    strict?: boolean | null
  }
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } }

/**
 * An OpenAI chat request as the adapter receives it: validated, defaults applied
 * (`temperature`, `max_tokens`), and `model` already the *upstream* model name (no prefix).
 */
export interface ChatRequest {
  model: string
  messages: ChatMessage[]
  stream?: boolean
  stream_options?: { include_usage?: boolean } | null
  temperature?: number
  top_p?: number
  max_tokens?: number
  max_completion_tokens?: number
  n?: number
  stop?: string | string[] | null
  tools?: FunctionTool[]
  tool_choice?: ToolChoice
  parallel_tool_calls?: boolean
  response_format?:
    | { type: 'text' }
    | { type: 'json_object' }
    | {
        type: 'json_schema'
        json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean }
      }
  logprobs?: boolean
  top_logprobs?: number
  user?: string
  seed?: number
  [extra: string]: unknown
}

export interface Usage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details?: Record<string, number>
  completion_tokens_details?: Record<string, number>
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call'

export interface ChatCompletion {
  id: string
  object: 'chat.completion'
  created: number
  model: string
  choices: Array<{
    index: number
    message: {
      role: 'assistant'
      content: string | null
      refusal: string | null
      tool_calls?: ToolCall[]
      [extra: string]: unknown
    }
    finish_reason: FinishReason
    logprobs: unknown | null
  }>
  usage?: Usage
  system_fingerprint?: string
  /** The tier that served the request, as OpenAI reports it (`flex`, `default`, ...); others send none. */
  service_tier?: string | null
  [extra: string]: unknown
}

export interface ToolCallDelta {
  index: number
  id?: string
  type?: 'function'
  function?: { name?: string; arguments?: string }
}

export interface ChatCompletionChunk {
  id: string
  object: 'chat.completion.chunk'
  created: number
  model: string
  choices: Array<{
    index: number
    delta: {
      role?: 'assistant'
      content?: string | null
      /** The model's reasoning text, as OpenAI-compatible servers (DeepSeek, vLLM) stream it. */
      reasoning_content?: string | null
      refusal?: string | null
      tool_calls?: ToolCallDelta[]
    }
    finish_reason: FinishReason | null
    logprobs?: unknown | null
  }>
  usage?: Usage | null
  system_fingerprint?: string
  /** The tier serving the request, on every chunk from OpenAI; others send none. */
  service_tier?: string | null
  [extra: string]: unknown
}
