/**
 * @module
 * Reading a conversation as plain text, the demo's token estimate of a prompt, and its count of
 * what it answers.
 */
import { DEMO_CHARS_PER_TOKEN, demoTokens } from '../../limits/output-count.ts'
import { isSpace } from '../../limits/space.ts'
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

/** Prompt tokens: every message's role and text, tool-call names and arguments; at least 1. */
export function promptTokens(messages: ChatMessage[]): number {
  let chars = 0
  for (const m of messages) {
    chars += m.role.length + messageText(m).length
    for (const call of m.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length
  }
  return Math.max(1, demoTokens(chars))
}

/**
 * The pieces the demo streams its text in: each word with the whitespace before it, and any
 * whitespace after the last word on its own; joined they give back `text` exactly.
 */
export function* words(text: string): Generator<string> {
  const word = /\s*\S+/g
  let end = 0
  for (let m = word.exec(text); m !== null; m = word.exec(text)) {
    end = word.lastIndex
    yield m[0]
  }
  if (end < text.length) yield text.slice(end)
}

/**
 * Output tokens of the streamed piece `text[from, to)` (`words`): the demo's count (four
 * characters a token, limits/output-count.ts), its trailing whitespace character apart, as a
 * gateway metering the stream counts it (pipeline/output-allowance.ts carries that character).
 */
function pieceTokens(text: string, from: number, to: number): number {
  const spaced = to > from && isSpace(text.charCodeAt(to - 1))
  return spaced ? demoTokens(to - from - 1) + 1 : demoTokens(to - from)
}

/**
 * The demo's answer held to `max` output tokens, as a provider holds an answer to `max_tokens`:
 * its tokens are its streamed pieces, each counted (`pieceTokens`) as a gateway metering the
 * stream counts them, so what it reports is that count and a cap it was sent is never passed by
 * it (DESIGN §11: the gateway cuts an upstream that passes it). `cut`: the text was shortened
 * (the last piece kept as far as it fits). One pass over the text, nothing made a piece.
 */
export function withinTokens(text: string, max: number): { text: string; tokens: number; cut: boolean } {
  let tokens = 0
  const n = text.length
  for (let from = 0; from < n; ) {
    // A piece: the whitespace before a word, and the word (`words`).
    let to = from
    while (to < n && isSpace(text.charCodeAt(to))) to++
    while (to < n && !isSpace(text.charCodeAt(to))) to++
    const count = pieceTokens(text, from, to)
    if (tokens + count > max) {
      const end = longestWithin(text, from, to, max - tokens)
      return { text: text.slice(0, end), tokens: tokens + pieceTokens(text, from, end), cut: true }
    }
    tokens += count
    from = to
  }
  return { text, tokens, cut: false }
}

/** Where the longest start of the piece `text[from, to)` counted at most `room` tokens ends (whole UTF-16 pairs). */
function longestWithin(text: string, from: number, to: number, room: number): number {
  let end = Math.min(to, from + room * DEMO_CHARS_PER_TOKEN)
  while (end > from && pieceTokens(text, from, end) > room) end--
  const code = text.charCodeAt(end - 1)
  return end > from && code >= 0xd800 && code <= 0xdbff ? end - 1 : end
}
