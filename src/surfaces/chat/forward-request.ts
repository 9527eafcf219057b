/**
 * @module
 * The upstream request of a chat → openai pass-through: the client's body text with only the edits
 * the gateway must make, done on the text (`json/fields.ts`) so unknown fields, key order and
 * number spelling reach the upstream as the client wrote them. The edits are `applyDefaults`'
 * effects, no more:
 *
 * - `model` → the provider's name for the model;
 * - known parameters set to `null` are removed (some compatible servers refuse a null);
 * - neither `max_tokens` nor `max_completion_tokens` → `max_tokens` = the model's configured maximum
 *   (the operator's cap, not necessarily the upstream's default); `temperature` unset → the
 *   gateway's default (1, clamped into the model's range: vLLM and Ollama default differently);
 * - a stream always asks for usage (`stream_options.include_usage: true`), which the relay withholds
 *   from a client that did not ask; a non-stream request loses `stream_options` (OpenAI refuses it).
 *
 * The limits (`checkTokenLimits`) were checked before admission. A body with a duplicated key is
 * re-serialised instead, so the upstream reads exactly what the gateway checked.
 *
 * @example
 * forwardBody(view, '{"model":"openai/gpt-4o","messages":[...],"max_tokens":10}', entry.model)
 * // '{"temperature":1,"model":"gpt-4o","messages":[...],"max_tokens":10}'
 */

import { defaultTemperature } from '../../catalogue/temperature.ts'
import type { ModelConfig } from '../../config/schema.ts'
import { editTopLevel } from '../../json/fields.ts'
import { applyDefaults, upstreamModelName } from './defaults.ts'
import { type ChatRequestInput, KNOWN_KEYS } from './request-schema.ts'

const KNOWN = new Set(KNOWN_KEYS)
const WITH_USAGE = '"stream_options":{"include_usage":true}'

export function forwardBody(view: ChatRequestInput, text: string, model: ModelConfig): string {
  const upstreamName = upstreamModelName(model)
  const edits = new Map<string, string | null>([['model', JSON.stringify(upstreamName)]])
  let keys = 0
  for (const key in view) {
    keys++
    if (view[key] === null && KNOWN.has(key)) edits.set(key, null)
  }
  const insert: string[] = []
  const options = view.stream_options
  if (view.stream === true) {
    if (options == null) insert.push(WITH_USAGE)
    else if (options.include_usage !== true)
      edits.set('stream_options', JSON.stringify({ ...options, include_usage: true }))
  } else if (options !== undefined) {
    edits.set('stream_options', null)
  }
  if (view.max_tokens == null && view.max_completion_tokens == null)
    insert.push(`"max_tokens":${model.max_output_tokens}`)
  if (view.temperature == null) insert.push(`"temperature":${defaultTemperature(model)}`)
  const edited = editTopLevel(text, edits, insert.join(','), keys)
  if (edited !== null) return edited
  const request = applyDefaults(view, model, upstreamName)
  if (request.stream === true) request.stream_options = { ...request.stream_options, include_usage: true }
  return JSON.stringify(request)
}
