/**
 * @module
 * OpenAI `messages` → Gemini `systemInstruction` + `contents`.
 *
 * Roles become `user` / `model`; system and developer messages move to `systemInstruction`;
 * tool results are `functionResponse` parts of a user turn, named after the call they answer
 * (Gemini matches by name, OpenAI by id); consecutive same-role turns are merged.
 */
import type { ChatMessage, ContentPart } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'
import { mapContentParts } from '../shared/map-content-parts.ts'
import { parseDataUrl, parseImageUrl } from '../shared/parse-data-url.ts'
import { parseToolArguments } from '../shared/parse-tool-arguments.ts'
import { unknownRoleError } from '../shared/unknown-role-error.ts'
import type { GeminiContent, GeminiPart, GeminiRequest } from './gemini-types.ts'
import { guessImageMimeType } from './guess-mime-type.ts'
import { SKIP_SIGNATURE, thoughtSignatureOf } from './tool-call-ids.ts'

export type GeminiPrompt = Pick<GeminiRequest, 'contents' | 'systemInstruction'>

/**
 * @example
 * convertToGeminiContents([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }])
 * // { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }
 */
export function convertToGeminiContents(messages: ChatMessage[]): GeminiPrompt {
  const system: Array<{ text: string }> = []
  const contents: GeminiContent[] = []
  const toolNames = new Map<string, string>()

  const append = (role: GeminiContent['role'], parts: GeminiPart[]) => {
    if (parts.length === 0) return
    const last = contents[contents.length - 1]
    if (last?.role === role) last.parts.push(...parts)
    else contents.push({ role, parts })
  }

  messages.forEach((message, i) => {
    const param = `messages[${i}]`
    switch (message.role) {
      case 'system':
      case 'developer':
        for (const part of contentParts(message.content, `${param}.content`)) {
          if (part.text === undefined)
            throw unsupported(`${param}.content`, 'system messages may only contain text')
          system.push({ text: part.text })
        }
        return
      case 'user':
        append('user', contentParts(message.content, `${param}.content`))
        return
      case 'assistant': {
        const calls = (message.tool_calls ?? []).map((call, j): GeminiPart => {
          toolNames.set(call.id, call.function.name)
          const args = parseToolArguments(
            call.function.arguments,
            `${param}.tool_calls[${j}].function.arguments`,
          )
          const part: GeminiPart = { functionCall: { name: call.function.name, args } }
          const signature = thoughtSignatureOf(call.id)
          if (signature) part.thoughtSignature = signature
          return part
        })
        if (calls.length && !calls.some((part) => part.thoughtSignature))
          calls[0]!.thoughtSignature = SKIP_SIGNATURE
        append('model', [...contentParts(message.content, `${param}.content`), ...calls])
        return
      }
      case 'tool': {
        const name = toolNames.get(message.tool_call_id ?? '') ?? message.name
        if (!name) {
          throw new GatewayError(
            400,
            'invalid_tool_call_id',
            `${param}.tool_call_id '${clip(String(message.tool_call_id))}' does not match a tool call of an earlier assistant message; Gemini needs the function's name.`,
            { param: `${param}.tool_call_id` },
          )
        }
        append('user', [{ functionResponse: { name, response: { content: toolOutput(message.content) } } }])
        return
      }
      default:
        throw unknownRoleError(message.role, param)
    }
  })

  return system.length ? { systemInstruction: { parts: system }, contents } : { contents }
}

/** A tool's output: its JSON value when the text is JSON, else `{ result: text }`. */
function toolOutput(content: ChatMessage['content']): unknown {
  const text =
    typeof content === 'string'
      ? content
      : (content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('')
  try {
    return JSON.parse(text)
  } catch {
    return { result: text }
  }
}

function contentParts(content: ChatMessage['content'], param: string): GeminiPart[] {
  return mapContentParts(content, param, convertPart)
}

function convertPart(part: ContentPart, param: string): GeminiPart | null {
  switch (part.type) {
    case 'text':
      return part.text === '' ? null : { text: part.text }
    case 'refusal':
      return part.refusal === '' ? null : { text: part.refusal }
    case 'image_url': {
      const image = parseImageUrl(part.image_url.url, `${param}.image_url.url`)
      if ('url' in image) return { fileData: { mimeType: guessImageMimeType(image.url), fileUri: image.url } }
      return { inlineData: { mimeType: image.mediaType, data: image.data } }
    }
    case 'input_audio':
      return { inlineData: { mimeType: `audio/${part.input_audio.format}`, data: part.input_audio.data } }
    case 'file': {
      const inline = typeof part.file.file_data === 'string' ? parseDataUrl(part.file.file_data) : null
      if (!inline) throw unsupported(param, 'file parts need file.file_data as a base64 data URL')
      return { inlineData: { mimeType: inline.mediaType, data: inline.data } }
    }
    default:
      throw unsupported(param, `content parts of type '${(part as { type: string }).type}' are not supported`)
  }
}

function unsupported(param: string, what: string): GatewayError {
  return new GatewayError(400, 'unsupported_feature', `${param}: ${what} for Gemini models.`, { param })
}
