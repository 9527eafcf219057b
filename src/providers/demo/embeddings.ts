/**
 * @module
 * The demo's embeddings: offline and deterministic. Each input gets a unit vector drawn from a
 * generator seeded with a hash of the input (its text, or its token ids), so the same input always
 * gets the same vector and different inputs near-orthogonal ones. `dimensions` takes the first
 * that many values, normalised again: a shorter vector is a prefix of the longer one in direction,
 * as with OpenAI's `text-embedding-3` models. Values are float32 already, so `float` and `base64`
 * answers carry the same numbers. An answer holds at most `MAX_DEMO_VALUES` values (400 naming
 * `input` past it). Usage is estimated from the input, and a text longer than the
 * model's `context_window` by that count is refused (400 naming it) before admission.
 *
 * @example
 * const demo = createDemoEmbeddings({ prefix: 'demo', kind: 'demo', models })
 * const { vectors } = await demo.embed({ model: 'embed', input: { kind: 'text', items: ['hi'] }, dimensions: 8 }, ctx)
 * vectors[0].length // 8, and the sum of squares is 1
 */
import type { ModelConfig, ProviderConfig } from '../../config/schema.ts'
import {
  type EmbeddingInput,
  type EmbeddingRequest,
  type EmbeddingResult,
  type EmbeddingUsage,
  embeddingUsage,
} from '../../operations/embeddings.ts'
import { GatewayError } from '../../util/errors.ts'
import { abortError } from '../http.ts'
import type { CallContext, EmbeddingCalls } from '../types.ts'

/**
 * The demo's own count, which is its bill (it reports it as usage, marked as an estimate): token
 * ids exactly, text at four characters a token, at least one an item.
 */
export function estimateItemTokens(item: string | readonly number[]): number {
  return typeof item === 'string' ? Math.max(1, Math.ceil(item.length / 4)) : item.length
}

function demoUsage(input: EmbeddingInput): EmbeddingUsage {
  let tokens = 0
  for (const item of input.items) tokens += estimateItemTokens(item)
  const usage = embeddingUsage(tokens)
  return input.kind === 'text' ? { ...usage, estimated: '4 characters a token' } : usage
}

/** Vector length of a demo model whose entry gives no `dimensions`. */
export const DEMO_DIMENSIONS = 256

/**
 * The most values a demo answer holds, all its vectors together (inputs × dimensions), whatever
 * the input: 64 inputs of 256 values, about 330 KB as JSON numbers. Past it, as many values as
 * the input has characters (token ids count 4 each; `answerBudget`): as the demo chat's answer
 * bound (`bound.ts`), a small request must not make an answer far larger than itself — 2,048
 * one-letter inputs made 11 MB, built in one go on the event loop — while an SDK's batch of
 * documents (LangChain's 512 a call, the AI SDK's up to 2,048) is answered.
 */
export const MAX_DEMO_VALUES = 16_384

/** The values an answer to `input` may hold: `MAX_DEMO_VALUES`, or the input's size if larger. */
export function answerBudget(input: EmbeddingRequest['input']): number {
  let size = 0
  if (input.kind === 'text') for (const item of input.items) size += item.length
  else for (const ids of input.items) size += ids.length * 4
  return Math.max(MAX_DEMO_VALUES, size)
}

export function createDemoEmbeddings(_provider: ProviderConfig): EmbeddingCalls {
  const check = (req: EmbeddingRequest, model: ModelConfig): void => {
    const most = model.dimensions ?? DEMO_DIMENSIONS
    if (req.dimensions !== undefined && req.dimensions > most) {
      throw new GatewayError(
        400,
        'invalid_value',
        `dimensions is ${req.dimensions}, but this model's vectors have ${most}. Send at most ${most}.`,
        { param: 'dimensions' },
      )
    }
    const length = req.dimensions ?? most
    const count = req.input.items.length
    const budget = answerBudget(req.input)
    if (count * length > budget) {
      const fits = Math.max(1, Math.floor(budget / length))
      throw new GatewayError(
        400,
        'answer_too_large',
        `input has ${count} items of ${length} values each, and the demo answers at most ${budget} values for this input (${MAX_DEMO_VALUES}, or as many as the input has characters): send at most ${fits} inputs at a time${length > 1 ? ', or fewer dimensions' : ''}.`,
        { param: 'input' },
      )
    }
    // Its own count (the usage it reports) within the model's window, as OpenAI holds each input to
    // its model's; token-id inputs the surface has checked already.
    if (req.input.kind === 'text') {
      const items = req.input.items
      for (let i = 0; i < items.length; i++) {
        const tokens = estimateItemTokens(items[i]!)
        if (tokens <= model.context_window) continue
        const param = items.length === 1 ? 'input' : `input[${i}]`
        throw new GatewayError(
          400,
          'context_length_exceeded',
          `${param} has ${tokens} tokens (the demo counts 4 characters a token); this model embeds at most ${model.context_window} per input. Shorten or split it.`,
          { param },
        )
      }
    }
  }

  return {
    check,
    async embed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
      if (ctx.signal.aborted) throw abortError(ctx.signal.reason)
      check(req, ctx.model)
      const length = req.dimensions ?? ctx.model.dimensions ?? DEMO_DIMENSIONS
      // Token ids keyed apart from any text (no text starts with a NUL and a digit list by chance).
      const keys =
        req.input.kind === 'text' ? req.input.items : req.input.items.map((ids) => `\u0000${ids.join(',')}`)
      const vectors = keys.map((key) => demoVector(key, length))
      return { vectors, usage: demoUsage(req.input) }
    },
  }
}

/** The unit vector of `key` with `length` float32 values. */
export function demoVector(key: string, length: number): number[] {
  const next = mulberry32(fnv1a(key))
  const values = new Array<number>(length)
  let sum = 0
  for (let i = 0; i < length; i++) {
    const v = next() * 2 - 1
    values[i] = v
    sum += v * v
  }
  const norm = Math.sqrt(sum) || 1
  for (let i = 0; i < length; i++) values[i] = Math.fround(values[i]! / norm)
  return values
}

/** FNV-1a over the UTF-16 code units: a 32-bit seed. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

/** A small seeded generator of numbers in [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
