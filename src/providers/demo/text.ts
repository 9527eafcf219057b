/**
 * @module
 * Reading a conversation as plain text, and the demo's token estimate.
 */
import type { ChatMessage } from '../../operations/chat.ts'

/** The text of a message's content: a string, or its text and refusal parts joined by spaces. */
export function messageText(message: ChatMessage | undefined): string {
  const content = message?.content
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  const parts: string[] = []
  for (const part of content) {
    if (part.type === 'text') parts.push(part.text)
    else if (part.type === 'refusal') parts.push(part.refusal)
  }
  return parts.join(' ')
}

const REMINDER = '<system-reminder>'
const REMINDER_END = '</system-reminder>'

/**
 * What the user wrote: the message's text without the `<system-reminder>` blocks an agent (Claude
 * Code) adds to a user turn for the model — echoing those buried the user's words. One pass: a
 * block ends at the first end tag after it; once no end tag follows, the rest stays as it is.
 */
export function userText(message: ChatMessage | undefined): string {
  const text = messageText(message)
  let open = text.indexOf(REMINDER)
  if (open === -1) return text
  const kept: string[] = []
  let from = 0
  while (open !== -1) {
    const close = text.indexOf(REMINDER_END, open + REMINDER.length)
    if (close === -1) break
    kept.push(text.slice(from, open))
    from = close + REMINDER_END.length
    open = text.indexOf(REMINDER, from)
  }
  kept.push(text.slice(from))
  return kept.join('').trim()
}

/** The last message with role `user`, or undefined. */
export function lastUserMessage(messages: ChatMessage[]): ChatMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return messages[i]
  return undefined
}

/** The last message that is not a system or developer message: whose turn it is. */
export function lastTurn(messages: ChatMessage[]): ChatMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const role = messages[i]!.role
    if (role !== 'system' && role !== 'developer') return messages[i]
  }
  return undefined
}

/** Tokens for `chars` characters: about four per token, OpenAI's rule of thumb for English. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4)
}

/** Prompt tokens: every message's role and text, tool-call names and arguments; at least 1. */
export function promptTokens(messages: ChatMessage[]): number {
  let chars = 0
  for (const m of messages) {
    chars += m.role.length + messageText(m).length
    for (const call of m.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length
  }
  return Math.max(1, estimateTokens(chars))
}
