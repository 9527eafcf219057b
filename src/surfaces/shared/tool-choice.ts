/**
 * @module
 * The one rule about a named tool every surface keeps (chat, Messages, Responses): a `tool_choice`
 * naming a tool must name one the request offers.
 *
 * @example
 * checkNamedTool('get_weather', ['get_time']) // throws 400 invalid_value, param tool_choice
 */
import { GatewayError } from '../../util/errors.ts'
import { clip, shownNames } from '../../util/text.ts'

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
