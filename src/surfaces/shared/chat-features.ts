/**
 * @module
 * Which catalogue features (DESIGN §3) a Chat Completions request uses, each with the field that
 * first uses it; `checkFeatures` (catalogue/) then refuses what the model lacks. The Responses
 * surface reads its requests through the same view.
 *
 * Choices where the contract is silent:
 * - `tools` is used by `tools` (a `tool_choice` comes only with them), by the deprecated
 *   `functions` / `function_call`, by assistant messages with `tool_calls` and by `tool` messages (so a conversation replaying tool results needs a
 *   tool-capable model even when it offers no new tools).
 * - `parallel_tool_calls` is used only by an explicit `parallel_tool_calls: true` alongside
 *   `tools`. Left out or `false`, a model without the feature simply calls one tool at a time.
 * - `logprobs` is used by `logprobs: true` or any `top_logprobs` value.
 * - `reasoning` is used by any `reasoning_effort` (Anthropic's `thinking` on the messages surface).
 * - `vision` is used by `image_url` and by `file` parts (a PDF is read as page images and text,
 *   as on the messages surface, where document blocks need it too).
 * - Each feature is reported once, at its first use: top-level fields before messages.
 *
 * @example
 * detectFeatures({ model: 'openai/gpt-4o', messages: [{ role: 'system', content: 'Be brief' }], stream: true })
 * // [{ feature: 'streaming', param: 'stream' }, { feature: 'system_messages', param: 'messages[0].role' }]
 */
import type { FeatureUse } from '../../catalogue/features.ts'
import type { Feature } from '../../config/schema-providers.ts'
import type { ChatRequestInput } from './chat-request-schema.ts'

/**
 * The field of OpenAI's deprecated function calling the request uses, if any: `functions`, or a
 * `function_call` other than `"none"`. Not in the chat schema (they pass as unknown keys).
 */
export function legacyFunctions(req: ChatRequestInput): 'functions' | 'function_call' | null {
  const { functions, function_call } = req as { functions?: unknown; function_call?: unknown }
  if (functions !== undefined && functions !== null) return 'functions'
  return function_call !== undefined && function_call !== null && function_call !== 'none'
    ? 'function_call'
    : null
}

/** Content parts a model reads only with `vision`. */
const VISUAL = new Set(['image_url', 'file'])

/** `feature` is among `uses` (a module function: an arrow in `detectFeatures` was one a request). */
function seen(uses: readonly FeatureUse[], feature: Feature): boolean {
  for (const use of uses) if (use.feature === feature) return true
  return false
}

/** Every feature the request uses, each once, with the field that first uses it. */
export function detectFeatures(req: ChatRequestInput): FeatureUse[] {
  const uses: FeatureUse[] = []

  if (req.stream === true) uses.push({ feature: 'streaming', param: 'stream' })
  const legacy = legacyFunctions(req)
  // No tool_choice without tools gets this far (`chat/validate.ts`), so `tools` names the use.
  if (req.tools !== undefined) uses.push({ feature: 'tools', param: 'tools' })
  else if (legacy) uses.push({ feature: 'tools', param: legacy })
  if (req.parallel_tool_calls === true && req.tools !== undefined) {
    uses.push({ feature: 'parallel_tool_calls', param: 'parallel_tool_calls' })
  }
  const format = req.response_format?.type
  if (format === 'json_object') uses.push({ feature: 'json_mode', param: 'response_format' })
  else if (format === 'json_schema') uses.push({ feature: 'json_schema', param: 'response_format' })
  if (req.logprobs === true) uses.push({ feature: 'logprobs', param: 'logprobs' })
  else if (req.top_logprobs !== undefined && req.top_logprobs !== null) {
    uses.push({ feature: 'logprobs', param: 'top_logprobs' })
  }
  if (req.n !== undefined && req.n !== null && req.n > 1) uses.push({ feature: 'n', param: 'n' })
  // Not in the chat schema (it passes through as an unknown key), so read it loosely.
  const effort = (req as { reasoning_effort?: unknown }).reasoning_effort
  if (effort !== undefined && effort !== null) uses.push({ feature: 'reasoning', param: 'reasoning_effort' })

  const messages = req.messages
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!
    switch (message.role) {
      case 'system':
      case 'developer':
        if (!seen(uses, 'system_messages'))
          uses.push({ feature: 'system_messages', param: `messages[${i}].role` })
        break
      case 'tool':
        if (!seen(uses, 'tools')) uses.push({ feature: 'tools', param: `messages[${i}].role` })
        break
      case 'assistant':
        if (message.tool_calls?.length && !seen(uses, 'tools')) {
          uses.push({ feature: 'tools', param: `messages[${i}].tool_calls` })
        }
        break
      case 'user': {
        const content = message.content
        if (typeof content === 'string') break
        for (let j = 0; j < content.length; j++) {
          const type = content[j]!.type
          const feature = VISUAL.has(type) ? 'vision' : type === 'input_audio' ? 'audio_input' : undefined
          if (feature && !seen(uses, feature)) uses.push({ feature, param: `messages[${i}].content[${j}]` })
        }
        break
      }
    }
  }
  return uses
}
