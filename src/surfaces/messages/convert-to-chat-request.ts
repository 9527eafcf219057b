/**
 * @module
 * A validated Messages request → the canonical chat request every adapter takes (the inverse of
 * `providers/anthropic/convert-to-anthropic-request.ts`), for routes to openai, gemini and demo
 * providers.
 *
 * - `system` (string or text blocks) and `system` turns → system messages.
 * - A user turn's `tool_result` blocks → `tool` messages first (OpenAI wants them right after the
 *   assistant's calls), then the rest of the turn as one user message; images in a tool result
 *   follow in that user message, since tool messages carry only text.
 * - Assistant `tool_use` blocks → `tool_calls` (input JSON-encoded); thinking blocks are dropped
 *   (signatures mean nothing to another provider), and so are the blocks of Anthropic's server
 *   tools (`server_tool_use`, `web_search_tool_result`, …: only Anthropic ran them). Elsewhere a
 *   block only Anthropic reads (`search_result`, …) is refused by name.
 * - `tool_choice`: auto → auto, any → required, none → none, tool → that function;
 *   `disable_parallel_tool_use: true` → `parallel_tool_calls: false`. Only beside tools: a lone
 *   `none` (what Anthropic does without tools) is left out, as OpenAI refuses a choice without tools.
 * - `thinking` enabled → `reasoning_effort` by budget (< 4,096 low, < 16,384 medium, else high);
 *   adaptive → medium, or the `output_config.effort` Claude Code sends; disabled → `none` (left out
 *   by the surface for a model without `reasoning`, which has nothing to turn off).
 * - `output_config.format` (structured outputs; the beta's top-level `output_format` too) →
 *   `response_format` json_schema named `output`, the schema as given; not `strict`, which
 *   OpenAI defaults off and which would refuse the schemas Anthropic accepts with optional
 *   properties. The client asked for JSON in that shape: it is never dropped.
 * - `stop_sequences` → `stop`, `metadata.user_id` → `user`, `top_k` → the chat form's `top_k`
 *   (the anthropic and gemini adapters read it; the surface drops it, named, for other kinds).
 *   Unknown fields have no chat counterpart: left out, and named by the surface (`unreadFields`).
 */

import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'
import type { ContentBlock, CountTokensRequest, MessagesRequest } from './request-schema.ts'

type Block<T extends ContentBlock['type']> = Extract<ContentBlock, { type: T }>

export type Conversation = Pick<ChatRequest, 'messages' | 'tools' | 'tool_choice' | 'parallel_tool_calls'> & {
  reasoning_effort?: string
}

/** What a translated route does with Anthropic's server tools: the model entry's `unsupported_tools`. */
export type ToolPolicy = 'reject' | 'drop'

/** The chat request, and the types of the server tools `drop` left out. */
export function convertToChatRequest(
  req: MessagesRequest,
  upstreamModel: string,
  policy: ToolPolicy = 'reject',
): { request: ChatRequest; dropped: string[] } {
  // Anthropic's API connects these and offers their tools; left out, the model would have none.
  const servers = (req as { mcp_servers?: unknown }).mcp_servers
  if (Array.isArray(servers) && servers.length > 0) {
    throw new GatewayError(
      400,
      'unsupported_feature',
      "mcp_servers are connected by Anthropic's API, and this model's provider does not speak it. Remove them, or choose an anthropic model.",
      { param: 'mcp_servers' },
    )
  }
  const { dropped, ...conversation } = convertConversation(req, policy)
  const out: ChatRequest = { ...conversation, model: upstreamModel, max_tokens: req.max_tokens }
  if (req.stream === true) {
    out.stream = true
    out.stream_options = { include_usage: true }
  }
  if (req.temperature !== undefined) out.temperature = req.temperature
  if (req.top_p !== undefined) out.top_p = req.top_p
  if (req.top_k !== undefined) out.top_k = req.top_k
  if (req.stop_sequences?.length) out.stop = req.stop_sequences
  const user = req.metadata?.user_id
  if (typeof user === 'string' && user) out.user = user
  const format = outputFormat(req)
  if (format) {
    out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } }
  }
  return { request: out, dropped }
}

/**
 * The JSON-schema output a Messages request asks for (`output_config.format`, or the beta's
 * `output_format`), with the param that holds it; null when none. Anthropic's one format type is
 * `json_schema` with an object `schema`: anything else is refused by name, not guessed at.
 */
export function outputFormat(
  req: CountTokensRequest,
): { schema: Record<string, unknown>; param: string } | null {
  const top = req as { output_config?: { format?: unknown }; output_format?: unknown }
  const [format, param] =
    top.output_config?.format != null
      ? [top.output_config.format, 'output_config.format']
      : [top.output_format, 'output_format']
  if (format == null) return null
  const f = format as { type?: unknown; schema?: unknown }
  if (typeof format !== 'object' || f.type !== 'json_schema') {
    throw new GatewayError(
      400,
      'invalid_value',
      `${param}.type must be "json_schema", the one output format.`,
      {
        param: `${param}.type`,
      },
    )
  }
  if (f.schema === null || typeof f.schema !== 'object' || Array.isArray(f.schema)) {
    throw new GatewayError(400, 'invalid_value', `${param}.schema must be a JSON Schema object.`, {
      param: `${param}.schema`,
    })
  }
  return { schema: f.schema as Record<string, unknown>, param }
}

/** One of Anthropic's server tools (`web_search_20250305`, …): a typed tool other than `custom`. */
export const isServerTool = <T extends { type?: string }>(tool: T): tool is T & { type: string } =>
  tool.type !== undefined && tool.type !== 'custom'

/**
 * Messages, tools, tool choice and reasoning: what count_tokens needs too. Anthropic's server tools
 * (`web_search_20250305`, …) run only at Anthropic: refused by name (`reject`), or left out
 * (`drop`) and their types returned in `dropped`.
 */
export function convertConversation(
  req: CountTokensRequest,
  policy: ToolPolicy = 'reject',
): Conversation & { dropped: string[] } {
  const messages: ChatMessage[] = []
  if (typeof req.system === 'string' ? req.system : req.system?.length) {
    messages.push({ role: 'system', content: systemText(req.system!) })
  }
  for (const [i, message] of req.messages.entries()) {
    if (typeof message.content === 'string') {
      messages.push({ role: message.role, content: message.content })
    } else if (message.role === 'assistant') {
      messages.push(assistantMessage(message.content))
    } else if (message.role === 'system') {
      messages.push({ role: 'system', content: textOf(message.content) })
    } else {
      messages.push(...userMessages(message.content, `messages[${i}].content`))
    }
  }
  const out: Conversation & { dropped: string[] } = { messages, dropped: [] }
  const tools: FunctionTool[] = []
  for (const [i, tool] of (req.tools ?? []).entries()) {
    if (!isServerTool(tool)) tools.push(toFunctionTool(tool))
    else if (policy === 'reject') throw serverToolError(tool.type, i)
    else if (!out.dropped.includes(tool.type)) out.dropped.push(tool.type)
  }
  if (tools.length) out.tools = tools
  const choice = req.tool_choice
  refuseChoiceOfDropped(choice, tools, out.dropped)
  // Only beside tools (`checkTools` lets a lone `none` through, Anthropic's default without tools):
  // OpenAI refuses any tool_choice without tools.
  if (choice && out.tools) {
    out.tool_choice =
      choice.type === 'auto'
        ? 'auto'
        : choice.type === 'any'
          ? 'required'
          : choice.type === 'none'
            ? 'none'
            : { type: 'function', function: { name: choice.name } }
    if ('disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use === true) {
      out.parallel_tool_calls = false
    }
  }
  const effort = reasoningEffort(req)
  if (effort) out.reasoning_effort = effort
  return out
}

function systemText(system: string | Array<{ text: string }>): string {
  return typeof system === 'string' ? system : system.map((b) => b.text).join('\n\n')
}

function textOf(blocks: ContentBlock[]): string {
  return blocks
    .filter((b): b is Block<'text'> => b.type === 'text')
    .map((b) => b.text)
    .join('\n\n')
}

function assistantMessage(blocks: ContentBlock[]): ChatMessage {
  const text = textOf(blocks)
  const calls: ToolCall[] = blocks
    .filter((b): b is Block<'tool_use'> => b.type === 'tool_use')
    .map((b) => ({
      id: b.id,
      type: 'function',
      function: { name: b.name, arguments: JSON.stringify(b.input) },
    }))
  const message: ChatMessage = { role: 'assistant', content: text || (calls.length ? null : '') }
  if (calls.length) message.tool_calls = calls
  return message
}

function userMessages(blocks: ContentBlock[], path: string): ChatMessage[] {
  const tools: ChatMessage[] = []
  const parts: ContentPart[] = []
  for (const [j, block] of blocks.entries()) {
    if (block.type === 'tool_result') {
      const content = block.content ?? ''
      const text = typeof content === 'string' ? content : textOf(content as ContentBlock[])
      tools.push({
        role: 'tool',
        tool_call_id: block.tool_use_id,
        content: block.is_error ? `Error: ${text}` : text,
      })
      if (Array.isArray(content)) {
        for (const [k, inner] of (content as ContentBlock[]).entries()) {
          if (inner.type !== 'text') parts.push(toPart(inner, `${path}[${j}].content[${k}]`))
        }
      }
    } else if (block.type !== 'thinking' && block.type !== 'redacted_thinking' && block.type !== 'tool_use') {
      parts.push(toPart(block, `${path}[${j}]`))
    }
  }
  if (parts.length === 0) return tools.length ? tools : [{ role: 'user', content: '' }]
  const content = parts.every((p) => p.type === 'text')
    ? parts.map((p) => (p as { text: string }).text).join('\n\n')
    : parts
  return [...tools, { role: 'user', content }]
}

function toPart(block: ContentBlock, param: string): ContentPart {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text }
    case 'image': {
      const source = block.source
      if (source.type === 'base64') {
        return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } }
      }
      if (source.type === 'url') return { type: 'image_url', image_url: { url: source.url } }
      throw notTranslatable('image blocks with a "file" source exist only at Anthropic', param)
    }
    case 'document': {
      const source = block.source as { type: string; data?: unknown; media_type?: unknown; url?: unknown }
      if (source.type === 'text' && typeof source.data === 'string')
        return { type: 'text', text: source.data }
      if (source.type === 'base64' && typeof source.data === 'string') {
        return {
          type: 'file',
          file: {
            filename: 'document',
            file_data: `data:${String(source.media_type)};base64,${source.data}`,
          },
        }
      }
      throw notTranslatable(
        `document blocks with a "${clip(source.type)}" source exist only at Anthropic`,
        param,
      )
    }
    default:
      throw notTranslatable(`"${clip(block.type)}" blocks are read only by Anthropic`, param)
  }
}

function serverToolError(type: string, i: number): GatewayError {
  return new GatewayError(
    400,
    'unsupported_feature',
    `tools[${i}] is Anthropic's server tool "${clip(type)}", which only anthropic providers run. Remove it, choose an anthropic model, or ask the operator to set unsupported_tools: drop on this model.`,
    { param: `tools[${i}]` },
  )
}

/**
 * A `tool_choice` that makes the model call a server tool `drop` left out, or any tool when every
 * tool was one: the model would answer in text, unasked.
 */
function refuseChoiceOfDropped(
  choice: CountTokensRequest['tool_choice'],
  kept: FunctionTool[],
  dropped: string[],
): void {
  if (!dropped.length || !choice || choice.type === 'auto' || choice.type === 'none') return
  if (choice.type === 'tool' ? kept.some((t) => t.function.name === choice.name) : kept.length > 0) return
  throw new GatewayError(
    400,
    'unsupported_value',
    `tool_choice makes the model call ${choice.type === 'tool' ? `"${clip(choice.name)}"` : 'a tool'}, but this model's upstream cannot run ${dropped.map((t) => `"${clip(t)}"`).join(', ')} (dropped). Send client tools, or leave tool_choice out.`,
    { param: 'tool_choice' },
  )
}

function toFunctionTool(tool: NonNullable<CountTokensRequest['tools']>[number]): FunctionTool {
  const fn: FunctionTool['function'] = {
    // A client tool's name is checked at decode (`checkTools`); only server tools lack one.
    name: tool.name!,
    parameters: (tool.input_schema as Record<string, unknown> | undefined) ?? {
      type: 'object',
      properties: {},
    },
  }
  if (tool.description !== undefined) fn.description = tool.description
  return { type: 'function', function: fn }
}

function reasoningEffort(req: CountTokensRequest): string | undefined {
  const thinking = req.thinking
  if (!thinking) return undefined
  // No thinking asked for: some models think unless told not to (Gemini 2.5 Flash).
  if (thinking.type === 'disabled') return 'none'
  if (thinking.type === 'enabled') {
    const budget = thinking.budget_tokens
    return budget < 4096 ? 'low' : budget < 16_384 ? 'medium' : 'high'
  }
  const effort = (req as { output_config?: { effort?: unknown } }).output_config?.effort
  return effort === 'low' || effort === 'medium' || effort === 'high' ? effort : 'medium'
}

function notTranslatable(what: string, param: string): GatewayError {
  return new GatewayError(
    400,
    'unsupported_feature',
    `${param}: this model's provider does not speak the Messages API, and ${what}. Choose an anthropic model or change the request.`,
    { param },
  )
}
