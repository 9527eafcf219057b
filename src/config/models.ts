/**
 * @module
 * A model entry's type (`chat` | `embedding`) at config load: which keys each type takes, whether
 * the provider's kind serves that type's operation at all (Anthropic has no embeddings), and the
 * loaded entry with an embedding model's chat-only fields filled in.
 *
 * @example
 * checkModelType('anthropic', model, '/providers/0/models/1', problems)
 * // '/providers/0/models/1/type: a anthropic provider cannot serve embedding models: ...'
 */
import { modelType, operationsOf } from '../operations/operation.ts'
import { aOrAn } from '../util/text.ts'
import { KIND_TEMPERATURE } from './kind-limits.ts'
import { KIND_OPERATIONS } from './kind-operations.ts'
import type { ModelConfig, RawConfig } from './schema.ts'
import type { ProviderKind } from './schema-providers.ts'

type RawProvider = RawConfig['providers'][number]
type RawModel = RawProvider['models'][number]

/** Keys that mean something only for chat models: an embedding model with one is a mistake. */
const CHAT_ONLY = ['max_output_tokens', 'features', 'temperature', 'unsupported_tools'] as const

/** Pushes a problem for every key that does not fit the model's type, and for a kind without the type's operation. */
export function checkModelType(
  kind: ProviderKind,
  model: RawModel,
  path: string,
  problems: Array<{ path: string; message: string }>,
): void {
  const type = modelType(model)
  for (const operation of operationsOf(type)) {
    const why = KIND_OPERATIONS[kind][operation]
    if (why)
      problems.push({
        path: `${path}/type`,
        message: `${aOrAn(kind)} provider cannot serve ${type} models: ${why}`,
      })
  }
  if (type === 'embedding') {
    for (const key of CHAT_ONLY) {
      if (model[key] === undefined) continue
      problems.push({
        path: `${path}/${key}`,
        message: `'${key}' is for chat models; remove it from this embedding model`,
      })
    }
    return
  }
  if (model.dimensions !== undefined) {
    problems.push({
      path: `${path}/dimensions`,
      message: "'dimensions' is for embedding models (type: embedding)",
    })
  }
  for (const key of ['max_output_tokens', 'features'] as const) {
    if (model[key] === undefined)
      problems.push({ path: `${path}/${key}`, message: `required for a chat model (missing)` })
  }
}

/**
 * The loaded entry: an embedding model produces no tokens and uses no chat features; a chat model
 * that names no temperature range gets its kind's where that is not OpenAI's 0–2.
 */
export function resolveModel(model: RawModel, kind: ProviderKind): ModelConfig {
  const temperature = model.temperature ?? (modelType(model) === 'chat' ? KIND_TEMPERATURE[kind] : undefined)
  return {
    ...model,
    max_output_tokens: model.max_output_tokens ?? 0,
    features: model.features ?? [],
    ...(temperature ? { temperature: { ...temperature } } : {}),
  }
}

/** Upstream model name: `upstream_name` from the config, else the catalogue name. */
export function upstreamModelName(model: ModelConfig): string {
  return model.upstream_name ?? model.name
}
