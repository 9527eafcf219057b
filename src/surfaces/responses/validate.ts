/**
 * @module
 * Parsing and validating a `POST /v1/responses` body, and the stateless rule: Switchyard stores no
 * responses, so fields that point at stored state (`previous_response_id`, an `item_reference`
 * input item, ...) are refused by name on every route (DESIGN §6).
 *
 * @example
 * const req = validateResponsesRequest(parseJsonObject(text, RESPONSES_EXAMPLE))
 */
import { compiledOnUse, validateWith } from '../../json/validation-error.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'
import { checkNamedTool } from '../shared/tool-choice.ts'
import { type ResponsesRequestInput, ResponsesRequestSchema, type ResponsesTool } from './request-schema.ts'

const checker = compiledOnUse(ResponsesRequestSchema)

export const RESPONSES_EXAMPLE = '{"model": "<prefix>/<model>", "input": "Hello"}'

/**
 * Checks a parsed body; returns it typed. Input messages without `type` get `type: "message"`
 * (OpenAI's default) so that every item is told apart by one key. Throws 400s naming the field.
 */
export function validateResponsesRequest(body: Record<string, unknown>): ResponsesRequestInput {
  if (Array.isArray(body.input)) {
    for (const item of body.input) {
      if (item !== null && typeof item === 'object' && !Array.isArray(item) && !('type' in item)) {
        ;(item as Record<string, unknown>).type = 'message'
      }
    }
  }
  const req: ResponsesRequestInput = validateWith(checker(), body)
  refuseStoredState(req)
  checkToolChoice(req)
  return req
}

/**
 * OpenAI's rules for this API, on every route: a `tool_choice` that makes the model call a tool
 * (`"required"`, a named tool) needs tools ("Tool choice 'required' must be specified with 'tools'
 * parameter"); `"auto"` and `"none"` may come alone; a named function is one of the function tools
 * (a namespace's functions included).
 */
function checkToolChoice(req: ResponsesRequestInput): void {
  const choice = req.tool_choice
  if (choice === undefined || choice === 'auto' || choice === 'none') return
  if (!req.tools?.length) {
    const what = typeof choice === 'string' ? `"${choice}"` : `{"type": "${clip(choice.type)}"}`
    throw new GatewayError(
      400,
      'invalid_value',
      `tool_choice ${what} makes the model call a tool, so it needs tools. Send the tools it chooses among, or leave tool_choice out.`,
      { param: 'tool_choice' },
    )
  }
  if (typeof choice === 'object' && choice.type === 'function' && typeof choice.name === 'string') {
    checkNamedTool(choice.name, functionNames(req.tools))
  }
}

/** The names of the function tools, a namespace's functions included. */
function functionNames(tools: readonly ResponsesTool[]): string[] {
  return tools.flatMap((tool) => {
    const t = tool as { type: string; name?: unknown; tools?: Array<{ type: string; name?: unknown }> }
    if (t.type === 'function') return typeof t.name === 'string' ? [t.name] : []
    if (t.type !== 'namespace') return []
    return (t.tools ?? []).flatMap((f) =>
      f.type === 'function' && typeof f.name === 'string' ? [f.name] : [],
    )
  })
}

/** Fields that only make sense if the gateway kept earlier responses. `store: true` is accepted. */
const STORED_STATE: Record<string, string> = {
  previous_response_id: 'send the whole conversation in "input" instead',
  conversation: 'send the whole conversation in "input" instead',
  background: 'leave it out and wait for the response (or stream it)',
}

function refuseStoredState(req: ResponsesRequestInput): void {
  // An item_reference names an item of an earlier response kept at the server: none is kept,
  // here or at a Responses upstream (it is sent store: false). The AI SDK's openai.responses(...)
  // sends them for its own earlier answers unless told store: false.
  if (Array.isArray(req.input)) {
    req.input.forEach((item, i) => {
      const { type, id } = item as { type?: unknown; id?: unknown }
      if (type !== 'item_reference') return
      throw new GatewayError(
        400,
        'unsupported_value',
        `input[${i}] is an item_reference${typeof id === 'string' ? ` to "${clip(id, 64)}"` : ''}, which needs responses stored on the server, and Switchyard is stateless (it stores no responses): send the item itself (the AI SDK's openai.responses(...) does with providerOptions: { openai: { store: false } }).`,
        { param: `input[${i}].type` },
      )
    })
  }
  for (const [field, instead] of Object.entries(STORED_STATE)) {
    const value = req[field]
    if (value === undefined || value === null || value === false) continue
    throw new GatewayError(
      400,
      'unsupported_parameter',
      `${field} needs responses stored on the server, and Switchyard is stateless (it stores no responses): ${instead}.`,
      { param: field },
    )
  }
}
