/**
 * @module
 * Parsing and validating a chat completion body. The schema is compiled once, at module load:
 * this runs on every request.
 *
 * @example
 * const req = validateChatRequest(parseChatBody(await request.text()))
 */
import type { Static, TSchema } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import type { JsonLimits } from '../../json/limits.ts'
import { parseJsonBody } from '../../json/parse-json-body.ts'
import { explainValidationError } from '../../json/validation-error.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip, shownNames } from '../../util/text.ts'
import { type ChatRequestInput, ChatRequestSchema } from './request-schema.ts'

const checker = TypeCompiler.Compile(ChatRequestSchema)

const EXAMPLE = '{"model": "<prefix>/<model>", "messages": [{"role": "user", "content": "Hello"}]}'

/**
 * The body as a JSON object: `parseJsonBody`'s checks (syntax with line and column, nesting and
 * size limits), then 400 `invalid_type` when the JSON is not an object. `validateChatRequest`
 * checks the object's shape. `limitsChecked`: `text` came from the body reader, which already held
 * it to the structural limits.
 */
export function parseChatBody(
  text: string,
  example: string = EXAMPLE,
  limitsChecked = false,
  /** The surface's own JSON limits (embeddings' larger arrays), where it has any. */
  limits?: JsonLimits,
): Record<string, unknown> {
  const body = parseJsonBody(text, example, limits, limitsChecked)
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const got = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`
    throw new GatewayError(
      400,
      'invalid_type',
      `The request body must be a JSON object, not ${got}. Send ${example}.`,
    )
  }
  return body as Record<string, unknown>
}

/**
 * Checks a parsed body against the chat request schema. Returns the body itself, typed (no copy);
 * throws a 400 `GatewayError` whose `param` names the offending field. Nesting is bounded by
 * `parseChatBody`, before the body is parsed.
 */
export function validateChatRequest(body: unknown): ChatRequestInput {
  const req = validateWith(checker, body)
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

/**
 * A `tool_choice` that names a tool the request does not offer: 400 naming `tool_choice`, on every
 * surface and route (OpenAI and Anthropic refuse it upstream; Gemini would be told to call a
 * function it was never declared), before admission.
 */
export function checkNamedTool(name: string, offered: readonly string[]): void {
  if (offered.includes(name)) return
  throw new GatewayError(
    400,
    'invalid_value',
    `tool_choice names the tool "${clip(name, 64)}", which is not among the tools sent (${shownNames(offered, '"') || 'none'}). Name one of them, or add the tool.`,
    { param: 'tool_choice' },
  )
}

/**
 * Any surface's schema check; the 400 names the offending field. (Nesting is bounded before the
 * body is parsed, by `parseJsonBody`.)
 */
export function validateWith<S extends TSchema>(check: TypeCheck<S>, body: unknown): Static<S> {
  if (!check.Check(body)) throw explainValidationError(check.Errors(body), body)
  return body as Static<S>
}
