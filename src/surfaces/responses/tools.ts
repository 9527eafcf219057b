/**
 * @module
 * The tools of a Responses request as a chat route can serve them (DESIGN §6): function tools map
 * one to one; a `namespace` group is expanded into its function tools (each call is reported back
 * with its namespace); hosted tools (`web_search`, `file_search`, `custom`, ...) are refused with a
 * 400 naming `tools[i]`, or dropped where the model entry says `unsupported_tools: drop`, or kept
 * untouched when the upstream speaks Responses itself and runs them.
 *
 * @example
 * const t = chatTools(req.tools, 'drop')
 * t.functions    // [{ type: 'function', function: { name: 'exec_command', ... } }, ...]
 * t.dropped      // ['web_search']
 * t.namespaces   // Map { 'spawn_agent' => 'multi_agent_v1' }
 */
import type { FunctionTool } from '../../providers/types.ts'
import { GatewayError } from '../../util/errors.ts'
import type { FunctionToolInput, NamespaceToolInput, ResponsesTool } from './request-schema.ts'

/** `keep`: the upstream runs hosted tools itself (a pass-through route). */
export type UnsupportedTools = 'reject' | 'drop' | 'keep'

export interface ChatTools {
  functions: FunctionTool[]
  /** Function name → the namespace it was declared in. */
  namespaces: Map<string, string>
  /** Types of the hosted tools left out, in request order, each once. */
  dropped: string[]
  /** The request's tools minus the dropped ones: what the response object echoes. */
  served: ResponsesTool[]
}

export function chatTools(tools: readonly ResponsesTool[] | undefined, policy: UnsupportedTools): ChatTools {
  const out: ChatTools = { functions: [], namespaces: new Map(), dropped: [], served: [] }
  const seen = new Set<string>()
  const addFunction = (tool: FunctionToolInput, param: string, namespace?: string): void => {
    if (seen.has(tool.name)) {
      throw new GatewayError(
        400,
        'invalid_value',
        `${param}: the function name "${tool.name}" is declared twice (namespaces are expanded into plain function names on this route). Rename one of them.`,
        { param },
      )
    }
    seen.add(tool.name)
    out.functions.push(toChatFunction(tool))
    if (namespace !== undefined) out.namespaces.set(tool.name, namespace)
  }
  const unsupported = (type: string, param: string): boolean => {
    if (policy === 'keep') return true
    if (policy === 'reject') throw hostedToolError(type, param)
    if (!out.dropped.includes(type)) out.dropped.push(type)
    return false
  }

  ;(tools ?? []).forEach((tool, i) => {
    const param = `tools[${i}]`
    if (tool.type === 'function') {
      addFunction(tool as unknown as FunctionToolInput, param)
      out.served.push(tool)
    } else if (tool.type === 'namespace') {
      const ns = tool as unknown as NamespaceToolInput
      ns.tools.forEach((inner, j) => {
        if (inner.type === 'function') addFunction(inner as FunctionToolInput, `${param}.tools[${j}]`, ns.name)
        else unsupported(inner.type, `${param}.tools[${j}]`)
      })
      out.served.push(tool)
    } else if (unsupported(tool.type, param)) {
      out.served.push(tool)
    }
  })
  return out
}

function toChatFunction(tool: FunctionToolInput): FunctionTool {
  const fn: FunctionTool['function'] = { name: tool.name }
  if (tool.description != null) fn.description = tool.description
  if (tool.parameters != null) fn.parameters = tool.parameters
  if (tool.strict != null) fn.strict = tool.strict
  return { type: 'function', function: fn }
}

function hostedToolError(type: string, param: string): GatewayError {
  return new GatewayError(
    400,
    'unsupported_feature',
    `${param} is a "${type}" tool, which only OpenAI runs, and this model's upstream cannot. Remove it, use a model whose provider speaks Responses (wire: responses), or ask the operator to set unsupported_tools: drop on this model.`,
    { param },
  )
}
