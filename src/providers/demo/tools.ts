/**
 * @module
 * When and how the demo model calls tools. It calls a tool when told to (`required`, a named
 * function), or, with `auto`, when the user's latest message names one of the functions. The
 * arguments are the first JSON object in that message if it has one, else a value built from the
 * tool's `parameters` schema (see `json-from-schema.ts`: strings carry the message text), so a
 * client that validates arguments against the schema (the AI SDK does) accepts them. System
 * messages after the user's turn (Claude Code appends its environment as one) do not end that turn.
 */
import type { ChatRequest, ToolCall } from '../types.ts'
import { valueFromSchema } from './json-from-schema.ts'
import { lastTurn, lastUserMessage, userText } from './text.ts'

export function pickToolCalls(req: ChatRequest): ToolCall[] {
  const tools = req.tools
  const choice = req.tool_choice ?? 'auto'
  if (!tools || tools.length === 0 || choice === 'none') return []
  // `auto` answers only the user's own turn: after a tool result it replies in text, not in a loop.
  if (choice === 'auto' && lastTurn(req.messages)?.role !== 'user') return []
  const text = userText(lastUserMessage(req.messages))
  const named = typeof choice === 'object' ? choice.function?.name : undefined
  let names: string[]
  if (named) names = [named]
  else {
    const words = new Set(text.match(/[A-Za-z0-9_-]+/g) ?? [])
    names = tools.map((t) => t.function.name).filter((name) => words.has(name))
    // `required`, or a tool_choice object this demo does not know: a call it must be.
    if (names.length === 0 && choice !== 'auto') names = [tools[0]!.function.name]
    if (req.parallel_tool_calls === false) names = names.slice(0, 1)
  }
  const given = firstJsonObject(text)
  const first = priorToolCalls(req) + 1
  return names.map((name, i) => ({
    id: `call_demo_${first + i}`,
    type: 'function' as const,
    function: {
      name,
      arguments:
        given ??
        argumentsFor(
          tools.find((t) => t.function.name === name),
          text,
        ),
    },
  }))
}

function argumentsFor(tool: { function: { parameters?: unknown } } | undefined, text: string): string {
  const schema = tool?.function.parameters
  if (!schema || typeof schema !== 'object') return '{}'
  const value = valueFromSchema(schema as Record<string, unknown>, text.trim())
  return JSON.stringify(value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {})
}

/** Ids continue across the conversation so that each call id is unique within it. */
function priorToolCalls(req: ChatRequest): number {
  let n = 0
  for (const m of req.messages) n += m.tool_calls?.length ?? 0
  return n
}

/** The first balanced `{...}` in `text` that parses as a JSON object, re-serialised compactly. */
export function firstJsonObject(text: string): string | undefined {
  for (let start = text.indexOf('{'); start !== -1; start = text.indexOf('{', start + 1)) {
    const end = closingBrace(text, start)
    if (end === -1) return undefined // no later '{' can close either
    try {
      const value: unknown = JSON.parse(text.slice(start, end + 1))
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) return JSON.stringify(value)
    } catch {}
  }
  return undefined
}

function closingBrace(text: string, start: number): number {
  let depth = 0
  let inString = false
  for (let i = start; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '{') depth++
    else if (c === '}' && --depth === 0) return i
  }
  return -1
}
