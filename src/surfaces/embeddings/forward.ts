/**
 * @module
 * Embeddings → openai pass-through: the client's body goes upstream with only `model` edited (on
 * the text, so `encoding_format` as sent — the `openai` SDK asks for base64 — `dimensions`, `user`
 * and fields the gateway does not model reach the upstream as the client wrote them), to
 * `{base_url}/embeddings`. The answer comes back with only `model` edited to the client's id; its
 * usage is what gets recorded (estimated from the input when a compatible server sends none).
 *
 * @example
 * forwardEmbeddingsBody(view, '{"model":"openai/te3s","input":"hi"}', 'text-embedding-3-small')
 * // '{"model":"text-embedding-3-small","input":"hi"}'
 */
import type { ProviderConfig } from '../../config/schema.ts'
import { replaceStringField, spliceTopLevel } from '../../json/fields.ts'
import type { JsonText } from '../../json/spliced.ts'
import { estimatedUsage } from '../../limits/embedding-estimate.ts'
import { type EmbeddingUsage, embeddingUsage } from '../../operations/embeddings.ts'
import { bodyError } from '../../providers/openai/api.ts'
import { scrubbed } from '../../providers/scrub.ts'
import { invalidResponse, sanitizeMessage } from '../../providers/upstream-errors.ts'
import type { EmbeddingsView } from './validate.ts'

/** The path under an openai provider's `base_url`. */
export const EMBEDDINGS_PATH = '/embeddings'

/**
 * The upstream body: the client's text, model swapped (re-serialised if the text has a duplicated
 * key). A large one is kept as its pieces, views of the text (`spliced.ts`): joined, it was a
 * second copy of the body until the upstream answered (24 × 10 MB in flight: 2.0 × their size).
 */
export function forwardEmbeddingsBody(view: EmbeddingsView, text: string, upstreamName: string): JsonText {
  const keys = Object.keys(view.body).length
  const edited = spliceTopLevel(text, new Map([['model', JSON.stringify(upstreamName)]]), '', keys)
  return edited ?? JSON.stringify({ ...view.body, model: upstreamName })
}

/**
 * The upstream's whole answer (already read under the provider's timeouts and size cap) → the
 * client's body and the usage to record. Anything but an OpenAI embeddings list → 502.
 */
export function relayEmbeddingsJson(
  text: string,
  modelId: string,
  view: EmbeddingsView,
  provider: ProviderConfig,
  /** The provider's name for the model, whose tokenizer bounds an estimate. */
  upstreamModel?: string,
): { body: string; usage: EmbeddingUsage } {
  const label = provider.prefix
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw scrubbed(invalidResponse(label, `the body is not JSON: ${sanitizeMessage(text, 120)}`), provider)
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw invalidResponse(label, 'the body is not a JSON object')
  }
  const error = bodyError(json, label)
  if (error) throw scrubbed(error, provider)
  const list = json as { data?: unknown; model?: unknown; usage?: { prompt_tokens?: unknown } }
  if (!Array.isArray(list.data) || list.data.length !== view.input.items.length) {
    throw invalidResponse(label, `expected ${view.input.items.length} embeddings in a data array`)
  }
  let body = replaceStringField(text, 1, 'model', modelId)
  if (list.model === undefined) {
    const close = body.lastIndexOf('}')
    body = `${body.slice(0, close)},"model":${JSON.stringify(modelId)}${body.slice(close)}`
  }
  const reported = list.usage?.prompt_tokens
  const usage =
    typeof reported === 'number' && Number.isFinite(reported) && reported >= 0
      ? embeddingUsage(reported)
      : estimatedUsage(view.input, provider.kind, upstreamModel)
  return { body, usage }
}
