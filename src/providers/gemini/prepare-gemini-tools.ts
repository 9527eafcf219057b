/**
 * @module
 * OpenAI `tools` and `tool_choice` → Gemini `tools` and `toolConfig`.
 */
import type { ChatRequest, ToolChoice } from '../types.ts'
import type { GeminiFunctionDeclaration, GeminiRequest, GeminiToolConfig } from './gemini-types.ts'

/**
 * Parameters go out as `parametersJsonSchema`, which takes JSON Schema as OpenAI clients write it;
 * the older `parameters` field takes an OpenAPI subset and rejects `additionalProperties`, which
 * every strict OpenAI tool schema carries. `parallel_tool_calls` has no Gemini counterpart.
 *
 * @example
 * prepareGeminiTools({ tools: [weather], tool_choice: { type: 'function', function: { name: 'weather' } } })
 * // { tools: [{ functionDeclarations: [...] }],
 * //   toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['weather'] } } }
 */
export function prepareGeminiTools(
  req: Pick<ChatRequest, 'tools' | 'tool_choice'>,
): Pick<GeminiRequest, 'tools' | 'toolConfig'> {
  if (!req.tools?.length) return {}
  const functionDeclarations = req.tools.map(({ function: fn }) => {
    const declaration: GeminiFunctionDeclaration = { name: fn.name }
    if (fn.description !== undefined) declaration.description = fn.description
    if (fn.parameters !== undefined) declaration.parametersJsonSchema = fn.parameters
    return declaration
  })
  const toolConfig = toolConfigOf(req.tool_choice)
  return toolConfig
    ? { tools: [{ functionDeclarations }], toolConfig }
    : { tools: [{ functionDeclarations }] }
}

function toolConfigOf(choice: ToolChoice | undefined): GeminiToolConfig | undefined {
  if (choice === undefined) return undefined
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } }
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } }
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } }
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } }
}
