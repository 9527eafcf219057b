/**
 * @module
 * The tools of a Responses request as a chat route can serve them (DESIGN §6): function tools map
 * one to one; a `namespace` group is expanded into its function tools (each call is reported back
 * with its namespace); hosted tools (`web_search`, `file_search`, `custom`, ...) reach only
 * upstreams that speak Responses. On a translated route the model entry's `unsupported_tools`
 * decides (`toolPolicy`): `reject` (default) → 400 naming `tools[i]`; `drop` → left out and named
 * in the `x-switchyard-dropped-tools` response header.
 *
 * @example
 * const t = chatTools(req.tools)
 * t.functions    // [{ type: 'function', function: { name: 'exec_command', ... } }, ...]
 * t.hosted       // [{ type: 'web_search', param: 'tools[8]', index: 8 }]
 * t.namespaces   // Map { 'spawn_agent' => 'multi_agent_v1' }
 * toolPolicy(t, 'drop') // { dropped: ['web_search'], served: [...the others] }
 */
import type { FunctionTool } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'
import type { FunctionToolInput, NamespaceToolInput, ResponsesTool } from './request-schema.ts'

export interface HostedTool {
  type: string
  /** Where it is declared, e.g. `tools[8]` or `tools[4].tools[2]`. */
  param: string
  /** Index of the top-level tool that holds it. */
  index: number
}

export interface ChatTools {
  functions: FunctionTool[]
  /** Function name → the namespace it was declared in. */
  namespaces: Map<string, string>
  /** Tools only an upstream that speaks Responses can serve, in request order. */
  hosted: HostedTool[]
  /** The request's tools as given. */
  all: readonly ResponsesTool[]
  /** Function names declared twice once namespaces are expanded: the chat form cannot carry them. */
  problems: GatewayError[]
}

export function chatTools(tools: readonly ResponsesTool[] | undefined): ChatTools {
  const out: ChatTools = { functions: [], namespaces: new Map(), hosted: [], all: tools ?? [], problems: [] }
  const seen = new Set<string>()
  const addFunction = (tool: FunctionToolInput, param: string, namespace?: string): void => {
    if (seen.has(tool.name)) {
      out.problems.push(
        new GatewayError(
          400,
          'invalid_value',
          `${param}: the function name "${clip(tool.name)}" is declared twice (this model's upstream gets namespaces expanded into plain function names). Rename one of them.`,
          { param },
        ),
      )
      return
    }
    seen.add(tool.name)
    out.functions.push(toChatFunction(tool))
    if (namespace !== undefined) out.namespaces.set(tool.name, namespace)
  }

  out.all.forEach((tool, index) => {
    const param = `tools[${index}]`
    if (tool.type === 'function') addFunction(tool as unknown as FunctionToolInput, param)
    else if (tool.type === 'namespace') {
      const ns = tool as unknown as NamespaceToolInput
      ns.tools.forEach((inner, j) => {
        const at = `${param}.tools[${j}]`
        if (inner.type === 'function') addFunction(inner as FunctionToolInput, at, ns.name)
        else out.hosted.push({ type: inner.type, param: at, index })
      })
    } else out.hosted.push({ type: tool.type, param, index })
  })
  return out
}

/**
 * What a translated route does with the hosted tools: refuse the first (`reject`), or leave them
 * out (`drop`). Returns the dropped types (each once) and the tools the response echoes.
 */
export function toolPolicy(
  tools: ChatTools,
  policy: 'reject' | 'drop',
): { dropped: string[]; served: ResponsesTool[] } {
  const first = tools.hosted[0]
  if (!first) return { dropped: [], served: [...tools.all] }
  if (policy === 'reject') throw hostedToolError(first)
  const dropped = [...new Set(tools.hosted.map((t) => t.type))]
  const gone = new Set(tools.hosted.filter((t) => !t.param.includes('.')).map((t) => t.index))
  return { dropped, served: tools.all.filter((_, i) => !gone.has(i)) }
}

function toChatFunction(tool: FunctionToolInput): FunctionTool {
  const fn: FunctionTool['function'] = { name: tool.name }
  if (tool.description != null) fn.description = tool.description
  if (tool.parameters != null) fn.parameters = tool.parameters
  if (tool.strict != null) fn.strict = tool.strict
  return { type: 'function', function: fn }
}

function hostedToolError(tool: HostedTool): GatewayError {
  return new GatewayError(
    400,
    'unsupported_feature',
    `${tool.param} is a "${clip(tool.type)}" tool, which only an upstream speaking the Responses API runs, and this model's upstream does not. Remove it, choose a model whose provider has wire: responses, or ask the operator to set unsupported_tools: drop on this model.`,
    { param: tool.param },
  )
}
