/**
 * @module
 * When and how the demo model calls tools. It calls a tool when told to (`required`, a named
 * function), or, with `auto`, when the user's latest message names one of the functions (each
 * named function once, in the order of the tool list). The arguments are the first JSON object in
 * that message if it has one, else a value built from the tool's `parameters` schema (see
 * `json-from-schema.ts`: strings carry the message text), so a client that validates arguments
 * against the schema (the AI SDK does) accepts them. All calls together stay within the answer's
 * bound (`bound.ts`): the text in their strings is cut to fit, and calls whose smallest arguments
 * cannot fit are refused. System messages after the user's turn (Claude Code appends its
 * environment as one) do not end that turn.
 */

import type { ChatRequest, FunctionTool, ToolCall } from '../../operations/chat.ts'
import { clip } from '../../util/text.ts'
import { answerTooLarge, schemaTooLarge } from './bound.ts'
import { fillSchema, measureSchema, type SchemaMeasure, SchemaTooLarge } from './json-from-schema.ts'
import { lastTurn, lastUserMessage, userText } from './text.ts'

interface Pick {
  name: string
  parameters: unknown
}

/** The calls of one choice, in at most `budget` characters of names and arguments; `n` for the refusal's words. */
export function pickToolCalls(req: ChatRequest, budget: number, n = 1): ToolCall[] {
  const tools = req.tools
  const choice = req.tool_choice ?? 'auto'
  if (!tools || tools.length === 0 || choice === 'none') return []
  // `auto` answers only the user's own turn: after a tool result it replies in text, not in a loop.
  if (choice === 'auto' && lastTurn(req.messages)?.role !== 'user') return []
  const text = userText(lastUserMessage(req.messages))
  const picks = pick(tools, choice, text, req.parallel_tool_calls !== false)
  if (picks.length === 0) return []
  const args = argumentsFor(picks, text, budget, n)
  const first = priorToolCalls(req) + 1
  return picks.map((p, i) => ({
    id: `call_demo_${first + i}`,
    type: 'function' as const,
    function: { name: p.name, arguments: args[i]! },
  }))
}

/** One pass over the tools: the named function, or those the text names, or (`required`) the first. */
function pick(
  tools: FunctionTool[],
  choice: ChatRequest['tool_choice'],
  text: string,
  parallel: boolean,
): Pick[] {
  const named = typeof choice === 'object' ? choice.function?.name : undefined
  if (named)
    return [{ name: named, parameters: tools.find((t) => t.function.name === named)?.function.parameters }]
  const words = new Set(text.match(/[A-Za-z0-9_-]+/g) ?? [])
  const picks: Pick[] = []
  const seen = new Set<string>()
  for (const tool of tools) {
    const name = tool.function.name
    if (!words.has(name) || seen.has(name)) continue
    seen.add(name)
    picks.push({ name, parameters: tool.function.parameters })
    if (!parallel) break
  }
  // `required`, or a tool_choice object this demo does not know: a call it must be.
  if (picks.length === 0 && choice !== 'auto')
    picks.push({ name: tools[0]!.function.name, parameters: tools[0]!.function.parameters })
  return picks
}

/**
 * Each call's arguments. The JSON object from the message goes to every call as it is; else the
 * schemas are measured first (their smallest values, and how many strings carry the text), and
 * what the bound leaves is shared equally among those strings.
 */
function argumentsFor(picks: Pick[], text: string, budget: number, n: number): string[] {
  const given = firstJsonObject(text)
  if (given !== undefined) {
    let size = 0
    for (const p of picks) size += p.name.length + given.length
    if (size > budget)
      throw answerTooLarge(
        `the JSON object in the user's message, the arguments of ${callsOf(picks)}, is ${given.length} characters`,
        n,
      )
    return picks.map(() => given)
  }
  const schemas = picks.map((p) => objectSchema(p.parameters))
  const measures: Array<SchemaMeasure | null> = []
  let size = 0
  let slots = 0
  for (const [i, p] of picks.entries()) {
    const schema = schemas[i]
    size += p.name.length + (schema ? 0 : 2)
    if (size > budget) throw answerTooLarge(`${callsOf(picks)} ${needs(picks)} more than that`, n)
    if (!schema) {
      measures.push(null)
      continue
    }
    try {
      const m = measureSchema(schema, budget - size)
      measures.push(m)
      size += m.size
      slots += m.slots
    } catch (e) {
      if (!(e instanceof SchemaTooLarge)) throw e
      if (e.keyword === null && picks.length > 1)
        throw answerTooLarge(`${callsOf(picks)} ${needs(picks)} more than that`, n)
      throw schemaTooLarge(e, `the parameters of tool '${clip(p.name)}'`, n)
    }
  }
  const share = slots === 0 ? 0 : Math.floor((budget - size) / slots)
  const trimmed = text.trim()
  return picks.map((_, i) => {
    const m = measures[i]
    if (!m) return '{}'
    const { json } = fillSchema(schemas[i]!, trimmed, m, share)
    return json.startsWith('{') ? json : '{}'
  })
}

function objectSchema(parameters: unknown): Record<string, unknown> | undefined {
  return parameters && typeof parameters === 'object' && !Array.isArray(parameters)
    ? (parameters as Record<string, unknown>)
    : undefined
}

const needs = (picks: Pick[]) => (picks.length === 1 ? 'needs' : 'need')

function callsOf(picks: Pick[]): string {
  return picks.length === 1
    ? `the call of tool '${clip(picks[0]!.name)}'`
    : `the ${picks.length} tool calls it makes`
}

/** Ids continue across the conversation so that each call id is unique within it. */
function priorToolCalls(req: ChatRequest): number {
  let n = 0
  for (const m of req.messages) n += m.tool_calls?.length ?? 0
  return n
}

/**
 * The first `{…}` in `text` that parses as a JSON object, re-serialised compactly. One pass: a `{`
 * opens a candidate, read as JSON (strings, escapes) until its braces balance; one that does not
 * parse is skipped whole, and the search goes on after it.
 */
export function firstJsonObject(text: string): string | undefined {
  for (let start = text.indexOf('{'); start !== -1; ) {
    const end = closingBrace(text, start)
    if (end === -1) return undefined // open to the end: nothing after it closes either
    try {
      const value: unknown = JSON.parse(text.slice(start, end + 1))
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) return JSON.stringify(value)
    } catch {}
    start = text.indexOf('{', end + 1)
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
