/**
 * @module
 * OpenAI `tools` and `tool_choice` → Gemini `tools` and `toolConfig`.
 */
import type { ChatRequest, ToolChoice } from '../../operations/chat.ts'
import type { GeminiFunctionDeclaration, GeminiRequest, GeminiToolConfig } from './gemini-types.ts'

/**
 * Parameters go out as `parametersJsonSchema`, which takes JSON Schema as OpenAI clients write it;
 * the older `parameters` field takes an OpenAPI subset and rejects `additionalProperties`, which
 * every strict OpenAI tool schema carries. `parallel_tool_calls` has no Gemini counterpart.
 *
 * `strict: true` has no per-function counterpart: Gemini holds calls to the schema per request,
 * by mode. `ANY` (a forced call) always does; where the model is free to answer in text (`auto`, or
 * no choice) a strict tool asks for `VALIDATED`, which then holds every function's calls to its
 * schema (a stricter answer for the non-strict ones is still a valid one).
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
  const toolConfig = toolConfigOf(
    req.tool_choice,
    req.tools.some(({ function: fn }) => fn.strict === true),
  )
  return toolConfig
    ? { tools: [{ functionDeclarations }], toolConfig }
    : { tools: [{ functionDeclarations }] }
}

function toolConfigOf(choice: ToolChoice | undefined, strict: boolean): GeminiToolConfig | undefined {
  if (choice === undefined || choice === 'auto') {
    if (strict) return { functionCallingConfig: { mode: 'VALIDATED' } }
    return choice === undefined ? undefined : { functionCallingConfig: { mode: 'AUTO' } }
  }
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } }
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } }
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } }
}
