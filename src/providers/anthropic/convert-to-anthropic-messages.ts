/**
 * @module
 * OpenAI `messages` → Anthropic `system` + `messages`.
 *
 * Anthropic differs from OpenAI in four ways this file absorbs: system prompts are a top-level
 * field, roles must alternate (consecutive same-role turns are merged), tool results are
 * `tool_result` blocks inside a *user* turn, and text blocks must not be empty. Prompt-cache
 * breakpoints (`cache_control` on a part or a message) stay on the block they mark
 * (anthropic-cache-control.ts).
 */
import type { ChatMessage, ContentPart } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { mapContentParts } from '../shared/map-content-parts.ts'
import { parseDataUrl, parseImageUrl } from '../shared/parse-data-url.ts'
import { parseToolArguments } from '../shared/parse-tool-arguments.ts'
import { unknownRoleError } from '../shared/unknown-role-error.ts'
import { markLast, withCacheControl } from './anthropic-cache-control.ts'
import type {
  AnthropicContentBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
} from './anthropic-types.ts'

export interface AnthropicPrompt {
  /** A single system message stays a string; several become text blocks, in order. */
  system?: string | AnthropicTextBlock[]
  messages: AnthropicMessage[]
}

/**
 * @example
 * convertToAnthropicMessages([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }])
 * // { system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] }
 */
export function convertToAnthropicMessages(messages: ChatMessage[]): AnthropicPrompt {
  const system: AnthropicTextBlock[] = []
  const out: AnthropicMessage[] = []

  const append = (role: AnthropicMessage['role'], blocks: AnthropicContentBlock[]) => {
    if (blocks.length === 0) return
    const last = out[out.length - 1]
    if (last?.role === role) last.content.push(...blocks)
    else out.push({ role, content: blocks })
  }

  messages.forEach((message, i) => {
    const param = `messages[${i}]`
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...markLast(textsOf(message.content, `${param}.content`), message, param))
        return
      case 'user':
        append('user', markLast(contentBlocks(message.content, `${param}.content`), message, param))
        return
      case 'assistant':
        append(
          'assistant',
          markLast(
            [
              ...contentBlocks(message.content, `${param}.content`),
              ...(message.tool_calls ?? []).map((call, j) => ({
                type: 'tool_use' as const,
                id: call.id,
                name: call.function.name,
                input: parseToolArguments(
                  call.function.arguments,
                  `${param}.tool_calls[${j}].function.arguments`,
                ),
              })),
            ],
            message,
            param,
          ),
        )
        return
      case 'tool':
        append('user', markLast([toolResult(message, param)], message, param))
        return
      default:
        throw unknownRoleError(message.role, param)
    }
  })

  // Anthropic wants a turn's tool results before its other content (a user message sent
  // between an assistant's tool calls and their results would otherwise precede them).
  for (const turn of out) {
    if (turn.role === 'user') {
      turn.content = [
        ...turn.content.filter((b) => b.type === 'tool_result'),
        ...turn.content.filter((b) => b.type !== 'tool_result'),
      ]
    }
  }

  const prompt: AnthropicPrompt = { messages: out }
  // One plain system text stays a string; several, or one marked for the cache, are blocks.
  if (system.length === 1 && system[0]!.cache_control === undefined) prompt.system = system[0]!.text
  else if (system.length > 0) prompt.system = system
  return prompt
}

function toolResult(message: ChatMessage, param: string): AnthropicToolResultBlock {
  const content =
    typeof message.content === 'string' || message.content == null
      ? (message.content ?? '')
      : contentBlocks(message.content, `${param}.content`).filter(
          (b): b is AnthropicTextBlock | AnthropicImageBlock => b.type === 'text' || b.type === 'image',
        )
  return { type: 'tool_result', tool_use_id: message.tool_call_id ?? '', content }
}

/** Non-empty texts of a system message (strings or text parts only), as text blocks. */
function textsOf(content: ChatMessage['content'], param: string): AnthropicTextBlock[] {
  return mapContentParts(content, param, (part, at) => {
    if (part.type !== 'text') throw unsupportedPart(part, at)
    return part.text === '' ? null : withCacheControl({ type: 'text' as const, text: part.text }, part, at)
  })
}

function contentBlocks(content: ChatMessage['content'], param: string): AnthropicContentBlock[] {
  return mapContentParts(content, param, partToBlock)
}

function partToBlock(part: ContentPart, param: string): AnthropicContentBlock | null {
  const block = blockOf(part, param)
  return block && withCacheControl(block, part, param)
}

function blockOf(part: ContentPart, param: string): AnthropicContentBlock | null {
  switch (part.type) {
    case 'text':
      return part.text === '' ? null : { type: 'text', text: part.text }
    case 'refusal':
      return part.refusal === '' ? null : { type: 'text', text: part.refusal }
    case 'image_url':
      return imageBlock(part.image_url.url, `${param}.image_url.url`)
    case 'file':
      return pdfBlock(part.file, param)
    default:
      throw unsupportedPart(part, param)
  }
}

function imageBlock(url: string, param: string): AnthropicImageBlock {
  const image = parseImageUrl(url, param)
  if ('url' in image) return { type: 'image', source: { type: 'url', url: image.url } }
  return { type: 'image', source: { type: 'base64', media_type: image.mediaType, data: image.data } }
}

/** OpenAI `file` parts carry `file_data` as a data URL; Anthropic reads PDFs as `document` blocks. */
function pdfBlock(file: Record<string, unknown>, param: string): AnthropicContentBlock {
  const inline = typeof file.file_data === 'string' ? parseDataUrl(file.file_data) : null
  if (inline?.mediaType !== 'application/pdf') {
    throw new GatewayError(
      400,
      'unsupported_feature',
      `${param}: Anthropic models accept file parts only as PDF data URLs in file.file_data (data:application/pdf;base64,...).`,
      { param },
    )
  }
  return { type: 'document', source: { type: 'base64', media_type: inline.mediaType, data: inline.data } }
}

function unsupportedPart(part: { type: string }, param: string): GatewayError {
  return new GatewayError(
    400,
    'unsupported_feature',
    `${param}: content parts of type '${part.type}' are not supported by Anthropic models here.`,
    { param },
  )
}
