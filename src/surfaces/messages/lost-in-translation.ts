/**
 * @module
 * What `convert-to-chat-request.ts` cannot carry from a Messages request that the pass-through to
 * an anthropic provider keeps as it came: the `anthropic-beta` header, `thinking` (the chat form
 * keeps only an effort, and the thinking blocks that come back lose their signatures), thinking
 * blocks in the history, `cache_control` and any other field of a block, tool or the request that
 * has no chat counterpart (`top_k`, `context_management`, `output_config`, citations, server
 * tools, ...).
 *
 * @example
 * lostInTranslation({ model, max_tokens, messages, thinking: { type: 'enabled', budget_tokens: 2048 } }, headers)
 * // 'thinking'
 */
import type { ContentBlock, MessagesRequest } from './request-schema.ts'

/** Top-level fields the translation carries (`thinking` is looked at on its own). */
const REQUEST_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'stop_sequences',
  'temperature',
  'top_p',
  'metadata',
  'stream',
  'tools',
  'tool_choice',
  'thinking',
])
/**
 * Top-level fields the translation reads beyond those (`convert-to-chat-request.ts`): structured
 * outputs and adaptive thinking's effort, `mcp_servers` (refused unless empty), and `top_k`, which
 * goes as the chat form's `top_k` where the target reads it (`unservedParams` decides).
 */
const ALSO_READ = new Set(['output_config', 'output_format', 'mcp_servers', 'top_k'])
/** What the translation reads of `output_config`. */
const OUTPUT_CONFIG_FIELDS = new Set(['format', 'effort'])

/**
 * The top-level fields of `view` a translation leaves out, named as the client wrote them (the
 * chat surface's `unservedParams` names the chat form's own): unknown fields, and any part of
 * `output_config` but `format` and `effort`. A field sent as null asks for nothing and is not named.
 *
 * @example
 * unreadFields({ model, max_tokens, messages, context_management: {...} }) // ['context_management']
 */
export function unreadFields(view: MessagesRequest): string[] {
  const unread: string[] = []
  for (const [key, value] of Object.entries(view)) {
    if (value === undefined || value === null || REQUEST_FIELDS.has(key)) continue
    if (!ALSO_READ.has(key)) unread.push(key)
    else if (key === 'output_config' && typeof value === 'object') {
      for (const [inner, v] of Object.entries(value)) {
        if (v !== undefined && v !== null && !OUTPUT_CONFIG_FIELDS.has(inner))
          unread.push(`output_config.${inner}`)
      }
    }
  }
  return unread
}

/** Fields of a content block the translation carries, whatever its type. */
const BLOCK_FIELDS = new Set([
  'type',
  'text',
  'source',
  'id',
  'name',
  'input',
  'tool_use_id',
  'content',
  'is_error',
])
const TOOL_FIELDS = new Set(['name', 'description', 'input_schema'])
/** Block types the translation carries. */
const TRANSLATED_BLOCKS = new Set<string>(['text', 'image', 'document', 'tool_use', 'tool_result'])

/** The first thing a translation of `view` would lose, named as the client wrote it; null when nothing. */
export function lostInTranslation(view: MessagesRequest, headers: Headers): string | null {
  if (headers.get('anthropic-beta') !== null) return 'the anthropic-beta header'
  if (view.thinking !== undefined && view.thinking.type !== 'disabled') return 'thinking'
  for (const key of Object.keys(view)) if (!REQUEST_FIELDS.has(key)) return key
  if (Array.isArray(view.system)) {
    const lost = blocksLose(view.system as ContentBlock[], 'system')
    if (lost) return lost
  }
  for (const [i, message] of view.messages.entries()) {
    if (typeof message.content === 'string') continue
    const lost = blocksLose(message.content, `messages[${i}].content`)
    if (lost) return lost
  }
  for (const [i, tool] of (view.tools ?? []).entries()) {
    for (const key of Object.keys(tool)) {
      if (!TOOL_FIELDS.has(key) && !(key === 'type' && tool.type === 'custom')) return `tools[${i}].${key}`
    }
  }
  return null
}

function blocksLose(blocks: ContentBlock[], path: string): string | null {
  for (const [j, block] of blocks.entries()) {
    // Thinking blocks, and the blocks only Anthropic reads (server tools' traces, search results).
    if (!TRANSLATED_BLOCKS.has(block.type)) return `${path}[${j}] (${block.type})`
    for (const key of Object.keys(block)) if (!BLOCK_FIELDS.has(key)) return `${path}[${j}].${key}`
    if (block.type === 'tool_result' && Array.isArray(block.content)) {
      const lost = blocksLose(block.content as ContentBlock[], `${path}[${j}].content`)
      if (lost) return lost
    }
  }
  return null
}
