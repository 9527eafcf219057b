/**
 * @module
 * OpenAI `tools`, `tool_choice` and `parallel_tool_calls` → Anthropic `tools` and `tool_choice`.
 * The three are read together because Anthropic folds the parallel switch into `tool_choice`.
 * A function's `strict: true` → the tool's `strict: true` (Anthropic's strict tool use); a tool's
 * `cache_control` (LiteLLM's form) → the tool's, a breakpoint after the tool list.
 */
import type { ChatRequest, ToolChoice } from '../../operations/chat.ts'
import { withCacheControl } from './anthropic-cache-control.ts'
import type { AnthropicTool, AnthropicToolChoice } from './anthropic-types.ts'

/** A tool without `parameters` takes no arguments; Anthropic still requires an object schema. */
const EMPTY_SCHEMA = { type: 'object', properties: {} }

/**
 * @example
 * prepareAnthropicTools({ tools: [weather], tool_choice: 'required', parallel_tool_calls: false })
 * // { tools: [{ name: 'weather', input_schema: {...} }], tool_choice: { type: 'any', disable_parallel_tool_use: true } }
 */
export function prepareAnthropicTools(
  req: Pick<ChatRequest, 'tools' | 'tool_choice' | 'parallel_tool_calls'>,
): { tools?: AnthropicTool[]; tool_choice?: AnthropicToolChoice } {
  if (!req.tools?.length) return {}
  const tools = req.tools.map((t, i) => {
    const fn = t.function
    const tool: AnthropicTool = { name: fn.name, input_schema: fn.parameters ?? EMPTY_SCHEMA }
    if (fn.description !== undefined) tool.description = fn.description
    // OpenAI's strict function calling is Anthropic's strict tool use; false is both defaults.
    if (fn.strict === true) tool.strict = true
    return withCacheControl(tool, t, `tools[${i}]`)
  })
  const choice = toolChoice(req.tool_choice, req.parallel_tool_calls === false)
  return choice ? { tools, tool_choice: choice } : { tools }
}

function toolChoice(choice: ToolChoice | undefined, serial: boolean): AnthropicToolChoice | undefined {
  const parallel = serial ? { disable_parallel_tool_use: true } : {}
  if (choice === 'none') return { type: 'none' }
  if (choice === 'required') return { type: 'any', ...parallel }
  if (typeof choice === 'object') return { type: 'tool', name: choice.function.name, ...parallel }
  // Without a choice Anthropic defaults to auto; spell it out only to carry the parallel switch.
  if (choice === 'auto' || serial) return { type: 'auto', ...parallel }
  return undefined
}
