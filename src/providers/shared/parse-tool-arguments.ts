/**
 * @module
 * Assistant `tool_calls[].function.arguments` arrive as a JSON string; Anthropic (`tool_use.input`)
 * and Gemini (`functionCall.args`) want the object.
 */
import { GatewayError } from '../../util/errors.ts'

/**
 * Parses a tool call's `arguments`. An empty string means "no arguments" (`{}`); anything that is
 * not a JSON object is the client's mistake → 400 naming `param`.
 *
 * @example
 * parseToolArguments('{"city":"Paris"}', 'messages[1].tool_calls[0].function.arguments') // { city: 'Paris' }
 */
export function parseToolArguments(args: string | undefined, param: string): Record<string, unknown> {
  if (args === undefined || args.trim() === '') return {}
  let value: unknown
  try {
    value = JSON.parse(args)
  } catch {
    throw new GatewayError(
      400,
      'invalid_tool_call_arguments',
      `${param} is not valid JSON; send the tool call's arguments as a JSON object string.`,
      { param },
    )
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new GatewayError(
      400,
      'invalid_tool_call_arguments',
      `${param} must be a JSON object (e.g. {"city":"Paris"}).`,
      { param },
    )
  }
  return value as Record<string, unknown>
}
