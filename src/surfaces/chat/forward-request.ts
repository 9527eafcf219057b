/**
 * @module
 * The upstream request of a chat → openai pass-through: the client's body text with only the edits
 * the gateway must make, done on the text (`json/fields.ts`) so unknown fields, key order and
 * number spelling reach the upstream as the client wrote them. The edits are what `applyDefaults` and
 * the openai adapter do to a request, no more:
 *
 * - `model` → the provider's name for the model;
 * - known parameters set to `null` are removed (some compatible servers refuse a null);
 * - the token limit goes under the name the upstream knows (`token-limit.ts`): a client's
 *   `max_tokens` becomes `max_completion_tokens` (OpenAI's reasoning models refuse the old name),
 *   or the reverse for a `max_tokens_param: max_tokens` provider;
 * - no default is added: the upstream applies its own (temperature 1, its maximum output);
 * - a stream always asks for usage (`stream_options.include_usage: true`), which the relay withholds
 *   from a client that did not ask; a non-stream request loses `stream_options` (OpenAI refuses it).
 *
 * A large body's edit is kept as its pieces (`json/spliced.ts`), sent without a copy of the body.
 *
 * The limits (`checkTokenLimits`) were checked before admission. A body with a duplicated key is
 * re-serialised instead, so the upstream reads exactly what the gateway checked.
 *
 * @example
 * forwardBody(view, '{"model":"openai/gpt-5","messages":[...],"max_tokens":10}', entry.model, 'max_completion_tokens')
 * // '{"max_completion_tokens":10,"model":"gpt-5","messages":[...]}'
 */

import { upstreamModelName } from '../../config/models.ts'
import type { ModelConfig } from '../../config/schema.ts'
import { spliceTopLevel } from '../../json/fields.ts'
import type { JsonText } from '../../json/spliced.ts'
import { otherTokenParam, type TokenParam, withTokenParam } from '../../providers/openai/token-limit.ts'
import type { ForwardAsk } from '../../providers/types.ts'
import { applyDefaults } from '../shared/chat-defaults.ts'
import { type ChatRequestInput, KNOWN_KEYS } from '../shared/chat-request-schema.ts'

const KNOWN = new Set(KNOWN_KEYS)
const WITH_USAGE = '"stream_options":{"include_usage":true}'

export function forwardBody(
  view: ChatRequestInput,
  text: string,
  model: ModelConfig,
  tokenParam: TokenParam,
  /**
   * `streamed`: a JSON request asked as a stream (under a limit): `"stream": true` and the usage
   * chunk, in this edit. `cap`: the limits' output cap, in `tokenParam` (the client's own limit,
   * whichever its name, replaced by it; else added).
   */
  { streamed = false, cap }: ForwardAsk = {},
): JsonText {
  const upstreamName = upstreamModelName(model)
  const edits = new Map<string, string | null>([['model', JSON.stringify(upstreamName)]])
  let keys = 0
  for (const key in view) {
    keys++
    if (view[key] === null && KNOWN.has(key)) edits.set(key, null)
  }
  const insert: string[] = []
  const options = view.stream_options
  if (streamed && view.stream !== true) {
    // Exactly `streamingBody(…, { stream_options: include_usage })`: any options the client sent
    // with a JSON request are replaced, as that edit replaced them.
    if ('stream' in view) edits.set('stream', 'true')
    else insert.push('"stream":true')
    if (options !== undefined) edits.set('stream_options', '{"include_usage":true}')
    else insert.push(WITH_USAGE)
  } else if (view.stream === true) {
    if (options == null) insert.push(WITH_USAGE)
    else if (options.include_usage !== true)
      edits.set('stream_options', JSON.stringify({ ...options, include_usage: true }))
  } else if (options !== undefined) {
    edits.set('stream_options', null)
  }
  const other = otherTokenParam(tokenParam)
  const limit = view[other]
  if (limit != null) edits.set(other, null)
  if (cap !== undefined) {
    if (view[tokenParam] != null) edits.set(tokenParam, String(cap))
    else insert.push(`${JSON.stringify(tokenParam)}:${cap}`)
  } else if (limit != null && view[tokenParam] == null) insert.push(`${JSON.stringify(tokenParam)}:${limit}`)
  const edited = spliceTopLevel(text, edits, insert.join(','), keys)
  if (edited !== null) return edited
  const request = withTokenParam(applyDefaults(view, model, upstreamName), tokenParam)
  if (cap !== undefined) request[tokenParam] = cap
  if (streamed && request.stream !== true) {
    request.stream = true
    request.stream_options = { include_usage: true }
  } else if (request.stream === true)
    request.stream_options = { ...request.stream_options, include_usage: true }
  return JSON.stringify(request)
}
