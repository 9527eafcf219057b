/**
 * @module
 * The feature check every surface shares: each surface names the catalogue features (DESIGN §3)
 * a request uses, in its own field names (`surfaces/shared/chat-features.ts` for the chat wire), and
 * `checkFeatures` refuses the ones the chosen model lacks.
 */

import type { ModelConfig } from '../config/schema.ts'
import type { Feature } from '../config/schema-providers.ts'
import { GatewayError } from '../util/errors.ts'
import { checkTemperature } from './temperature.ts'

export interface FeatureUse {
  feature: Feature
  /** The request field that uses it, e.g. `stream`, `messages[2].content[1]`. */
  param: string
  /** What to change to do without it, in the surface's terms; default: the chat wording. */
  doWithout?: string
}

/**
 * A surface's maker of feature uses in its own words: `doWithout` says, for each feature the
 * surface detects, what to change in its request to do without it.
 *
 * @example
 * const use = featureUse({ streaming: 'send "stream": false' })
 * use('streaming', 'stream') // { feature: 'streaming', param: 'stream', doWithout: 'send "stream": false' }
 */
export const featureUse =
  <F extends Feature>(doWithout: Readonly<Record<F, string>>) =>
  (feature: F, param: string): FeatureUse => ({ feature, param, doWithout: doWithout[feature] })

/** What to change in the request to do without each feature, in the chat wire's words. */
export const CHAT_DO_WITHOUT: Readonly<Record<Feature, string>> = {
  streaming: 'send "stream": false',
  tools: 'remove tools, tool_choice, assistant tool_calls and tool messages',
  parallel_tool_calls: 'leave "parallel_tool_calls" out or set it to false',
  vision: 'remove the image_url and file content parts',
  audio_input: 'remove the input_audio content parts',
  json_mode: 'remove "response_format"',
  json_schema: 'remove "response_format"',
  logprobs: 'remove "logprobs" and "top_logprobs"',
  n: 'send "n": 1',
  system_messages: 'move the system or developer instructions into the first user message',
  reasoning: 'leave "reasoning_effort" out',
  // Never detected: a trailing assistant message is sent to any model; this feature only says
  // which models may finish a stream another one was cut off in.
  prefill: 'end the messages with a user turn',
}

/** Whether `model` lacks the feature `use` needs. */
function lacks(use: FeatureUse, model: ModelConfig): boolean {
  return !model.features.includes(use.feature)
}

/** Whether `model` lacks a feature among `uses`. */
function lacksAny(uses: readonly FeatureUse[], model: ModelConfig): boolean {
  for (const use of uses) if (lacks(use, model)) return true
  return false
}

/**
 * The one feature check, for every surface: `uses` name the fields in the surface's own terms
 * (`thinking`, `tools[3]`, `messages[0].content[1]`).
 */
export function checkFeatures(
  uses: readonly FeatureUse[],
  temperature: number | null | undefined,
  model: ModelConfig,
  modelId: string,
): void {
  // The list of the missing only when there is one (a filter's array and arrow on every request).
  if (lacksAny(uses, model)) {
    const missing = uses.filter((use) => lacks(use, model))
    const first = missing[0]!
    const others = missing.slice(1).map((use) => use.feature)
    const also = others.length ? ` It does not support ${others.join(', ')} either.` : ''
    throw new GatewayError(
      400,
      'unsupported_feature',
      `The model "${modelId}" does not support ${first.feature}, which ${first.param} uses. To use this model, ${first.doWithout ?? CHAT_DO_WITHOUT[first.feature]}; or choose a model that supports ${first.feature} (GET /v1/models lists each model's features).${also}`,
      { param: first.param },
    )
  }
  checkTemperature(temperature, model, modelId)
}

/**
 * A request for no reasoning (`reasoning_effort: "none"`, named `param` in the surface's terms) to
 * a model that cannot turn it off (`always_reasons`): 400 naming it, before admission, rather than
 * a model that reasons anyway or an upstream's refusal (Gemini 2.5 Pro: "Budget 0 is invalid").
 * `asked` is how the request said it (Messages: `thinking {"type": "disabled"}`); `least`, what to
 * ask for instead, in the surface's terms.
 */
export function checkReasoningOff(
  effort: unknown,
  param: string,
  model: ModelConfig,
  modelId: string,
  words: { asked?: string; least?: string } = {},
): void {
  if (effort !== 'none' || model.always_reasons !== true) return
  const asked = words.asked ?? `${param} "none"`
  const least = words.least ?? 'the least reasoning ("minimal" or "low")'
  throw new GatewayError(
    400,
    'unsupported_value',
    `${asked} asks for no reasoning, and the model "${modelId}" always reasons. Ask for ${least}, or choose a model that can answer without reasoning.`,
    { param },
  )
}
