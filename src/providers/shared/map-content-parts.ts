/**
 * @module
 * Walks an OpenAI message `content` (a string or an array of parts) with a provider's part
 * converter, so that every adapter reads content the same way.
 */
import type { ChatMessage, ContentPart } from '../../operations/chat.ts'

/**
 * A string is one text part (converted with the `content` param itself); array parts get
 * `param[j]`. Parts the converter maps to `null` (empty texts, say) are dropped.
 *
 * @example
 * mapContentParts('Hi', 'messages[0].content', (p) => (p.type === 'text' ? { text: p.text } : null))
 * // [{ text: 'Hi' }]
 */
export function mapContentParts<T>(
  content: ChatMessage['content'],
  param: string,
  convert: (part: ContentPart, param: string) => T | null,
): T[] {
  if (content == null) return []
  const parts: Array<[ContentPart, string]> =
    typeof content === 'string'
      ? [[{ type: 'text', text: content }, param]]
      : content.map((part, j) => [part, `${param}[${j}]`])
  return parts.flatMap(([part, at]) => {
    const converted = convert(part, at)
    return converted === null ? [] : [converted]
  })
}
