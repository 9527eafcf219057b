/**
 * @module
 * Parsing and validating a chat completion body. The schema is compiled once, at the first request
 * (compiledOnUse): this runs on every request.
 *
 * @example
 * const req = validateChatRequest(parseJsonObject(await request.text(), CHAT_EXAMPLE))
 */
import { compiledOnUse, validateWith } from '../../json/validation-error.ts'
import { GatewayError } from '../../util/errors.ts'
import { type ChatRequestInput, ChatRequestSchema } from '../shared/chat-request-schema.ts'
import { checkNamedTool } from '../shared/tool-choice.ts'

const checker = compiledOnUse(ChatRequestSchema)

/** The body the chat surface's messages suggest (`parseJsonObject`). */
export const CHAT_EXAMPLE =
  '{"model": "<prefix>/<model>", "messages": [{"role": "user", "content": "Hello"}]}'

/**
 * Checks a parsed body against the chat request schema. Returns the body itself, typed (no copy);
 * throws a 400 `GatewayError` whose `param` names the offending field. Nesting is bounded by
 * `parseJsonObject`, before the body is parsed.
 */
export function validateChatRequest(body: unknown): ChatRequestInput {
  const req = validateWith(checker(), body)
  checkToolChoice(req)
  return req
}

/**
 * OpenAI's rules, on every route: any `tool_choice`, `"none"` included, needs `tools` ("'tool_choice'
 * is only allowed when 'tools' are specified"; the schema already refuses `tools: []`), and a named
 * function must be one of them.
 */
function checkToolChoice(req: ChatRequestInput): void {
  const choice = req.tool_choice
  if (choice === undefined) return
  if (req.tools === undefined) {
    throw new GatewayError(
      400,
      'invalid_value',
      'tool_choice is only allowed when tools are specified. Send the tools it chooses among, or leave tool_choice out.',
      { param: 'tool_choice' },
    )
  }
  if (typeof choice === 'object') {
    checkNamedTool(
      choice.function.name,
      req.tools.map((t) => t.function.name),
    )
  }
}
