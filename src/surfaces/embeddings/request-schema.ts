/**
 * @module
 * OpenAI's `POST /v1/embeddings` request (`CreateEmbeddingRequest` in OpenAI's published OpenAPI
 * document, as the `openai` SDK's `EmbeddingCreateParams` types it): `model`, `input` as a string,
 * an array of strings, an array of token ids or an array of token-id arrays, `dimensions`,
 * `encoding_format` (`float` | `base64`) and `user`. OpenAI's own bounds hold: no empty string or
 * array, at most 2048 items in an array of inputs. Other fields pass through to an `openai`
 * upstream (an OpenAI-compatible server may take more, e.g. vLLM's `truncate_prompt_tokens`); a
 * translated route refuses them by name, as OpenAI does (`refuseUnknownFields`).
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { type JsonLimits, MAX_JSON_DEPTH, MAX_JSON_ELEMENTS } from '../../json/limits.ts'

/** OpenAI: "any array must be 2048 dimensions or less". */
export const MAX_INPUT_ITEMS = 2048

/** OpenAI: "a maximum of 300,000 tokens summed across all inputs in a single request". */
const MAX_REQUEST_TOKENS = 300_000

/**
 * The JSON structural limits an embeddings body is read under: the gateway's default for all but
 * numbers in arrays, and OpenAI's 300,000 of those. Token-id inputs are one array item per token,
 * so the default (100,000 items) refused batches OpenAI takes — LangChain's Python
 * `OpenAIEmbeddings` sends up to 1,000 token arrays a request by default. Raising `maxElements`
 * instead let object members in too: a 3.4 MB `{"x": {"k0": 1, …, "k299999": 1}}` cost 7–10 × a
 * valid body of its size before its 400, and on an openai route was forwarded whole.
 */
export const EMBEDDINGS_JSON_LIMITS: Readonly<JsonLimits> = Object.freeze({
  maxDepth: MAX_JSON_DEPTH,
  maxElements: MAX_JSON_ELEMENTS,
  maxArrayScalars: MAX_REQUEST_TOKENS,
})

/**
 * The largest token id taken: a 32-bit index, far past any vocabulary (o200k_base has 200,019
 * entries, the largest open ones some 262,000). Past it a number is no token — and past 2^53 not
 * even the number the client wrote (`9007199254740993` reads as `…992`), so the demo would embed
 * another input than the one an upstream reads from the passed-through text.
 */
export const MAX_TOKEN_ID = 2 ** 31 - 1

const Text = T.String({ minLength: 1 })
const TokenIds = T.Array(T.Integer({ minimum: 0, maximum: MAX_TOKEN_ID }), { minItems: 1 })

export const EmbeddingsInputSchema = T.Union(
  [
    Text,
    T.Array(Text, { minItems: 1, maxItems: MAX_INPUT_ITEMS }),
    TokenIds,
    T.Array(TokenIds, { minItems: 1, maxItems: MAX_INPUT_ITEMS }),
  ],
  {
    'x-expected':
      'a non-empty string, an array of non-empty strings, an array of token ids, or an array of token-id arrays',
  },
)

export const EmbeddingsRequestSchema = T.Object({
  model: T.String({ minLength: 1 }),
  input: EmbeddingsInputSchema,
  dimensions: T.Optional(T.Integer({ minimum: 1 })),
  encoding_format: T.Optional(T.Union([T.Literal('float'), T.Literal('base64')])),
  user: T.Optional(T.String()),
})

export type EmbeddingsRequestInput = Static<typeof EmbeddingsRequestSchema>

export type EncodingFormat = 'float' | 'base64'

export const EMBEDDINGS_EXAMPLE = '{"model": "<prefix>/<model>", "input": "The food was delicious"}'
