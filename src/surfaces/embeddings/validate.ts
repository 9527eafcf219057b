/**
 * @module
 * Decoding a `POST /v1/embeddings` body: JSON → OpenAI's schema → the surface's view, whose
 * `input` is the canonical list. Every refusal is a 400 naming the field; problems in `input` name
 * the item (`input[3]`) and say which of OpenAI's four shapes was expected.
 *
 * @example
 * const view = decodeEmbeddings('{"model":"demo/embed","input":["a","b"]}')
 * view.input // { kind: 'text', items: ['a', 'b'] }
 */
import { parseJsonObject } from '../../json/parse-json-body.ts'
import { compiledOnUse, explainValidationError } from '../../json/validation-error.ts'
import type { EmbeddingInput } from '../../operations/embeddings.ts'
import { GatewayError } from '../../util/errors.ts'
import { aOrAn, clip, shownNames } from '../../util/text.ts'
import {
  EMBEDDINGS_EXAMPLE,
  EMBEDDINGS_JSON_LIMITS,
  type EmbeddingsRequestInput,
  EmbeddingsRequestSchema,
  MAX_INPUT_ITEMS,
  MAX_TOKEN_ID,
} from './request-schema.ts'

const checker = compiledOnUse(EmbeddingsRequestSchema)

/** The validated body, and its input as the canonical list. */
export interface EmbeddingsView {
  body: EmbeddingsRequestInput
  input: EmbeddingInput
}

/**
 * Input strings of this many characters or more are views of the body's text, not copies
 * (`parseSharingStrings`): a batch is up to 2,048 of them, a few KB each, under the 16 KiB the
 * chat surfaces' long messages are shared from — 16 × 9.5 MB of such batches held each body twice.
 */
const SHARED_INPUT_MIN = 1024

/**
 * `limitsChecked`: the body reader already held `text` to `EMBEDDINGS_JSON_LIMITS`. `named`: told
 * the model the body names before the rest is checked (`SurfaceCore.decode`).
 */
export function decodeEmbeddings(
  text: string,
  limitsChecked = false,
  named?: (model: unknown) => void,
): EmbeddingsView {
  const body = parseJsonObject(
    text,
    EMBEDDINGS_EXAMPLE,
    limitsChecked,
    EMBEDDINGS_JSON_LIMITS,
    SHARED_INPUT_MIN,
  )
  named?.(body.model)
  const check = checker()
  if (!check.Check(body)) {
    const first = check.Errors(body).First()
    if (first && (first.path === '/input' || first.path.startsWith('/input/'))) throw inputError(body.input)
    throw explainValidationError(check.Errors(body), body)
  }
  return { body, input: normaliseInput(body.input) }
}

/** The fields of OpenAI's embeddings request: all a translation reads. */
const KNOWN_FIELDS = Object.keys(EmbeddingsRequestSchema.properties)

/**
 * On a translated route (gemini, demo) the gateway plays OpenAI's API, which refuses a field it
 * does not know ("Unrecognized request argument supplied"): 400 `unknown_parameter` naming the
 * first, rather than embedding without it. A field beyond OpenAI's is some other server's knob
 * (`input_type`, `task`, `truncate_prompt_tokens`, ...) and changes the vectors, so leaving it
 * out would answer another request than the one sent. An `openai` route passes the body on as it
 * is: there the upstream takes it or refuses it by name. Sent as null, a field asks for nothing.
 */
export function refuseUnknownFields(body: EmbeddingsRequestInput, modelId: string, kind: string): void {
  const unknown = Object.keys(body).filter(
    (key) => !KNOWN_FIELDS.includes(key) && body[key as keyof typeof body] != null,
  )
  if (unknown.length === 0) return
  throw new GatewayError(
    400,
    'unknown_parameter',
    `Unrecognized request argument supplied: ${shownNames(unknown)}. '${modelId}' is served through ${aOrAn(kind)} provider's embeddings, which take only OpenAI's fields (${KNOWN_FIELDS.join(', ')}): leave it out, or choose a model of an OpenAI-compatible provider that takes it.`,
    { param: clip(unknown[0]!, 64) },
  )
}

function normaliseInput(input: EmbeddingsRequestInput['input']): EmbeddingInput {
  if (typeof input === 'string') return { kind: 'text', items: [input] }
  const first = input[0]
  if (typeof first === 'string') return { kind: 'text', items: input as string[] }
  if (typeof first === 'number') return { kind: 'tokens', items: [input as number[]] }
  return { kind: 'tokens', items: input as number[][] }
}

const SHAPES =
  'Send a non-empty string, an array of non-empty strings, an array of token ids, or an array of token-id arrays, e.g. "input": "The food was delicious".'

/** The 400 for an `input` the schema refused, naming the first item at fault. */
export function inputError(input: unknown): GatewayError {
  if (input === undefined) return bad('input', 'missing_required_parameter', `input is required. ${SHAPES}`)
  if (input === '') return bad('input', 'invalid_value', `input must not be an empty string. ${SHAPES}`)
  if (typeof input === 'string') return invalid()
  if (!Array.isArray(input)) {
    return bad('input', 'invalid_type', `input must be a string or an array; got ${kind(input)}. ${SHAPES}`)
  }
  if (input.length === 0) return bad('input', 'invalid_value', `input must not be an empty array. ${SHAPES}`)
  const first = input[0]
  if (typeof first === 'number') return tokenIdsError(input, 'input') ?? invalid()
  if (typeof first !== 'string' && !Array.isArray(first)) {
    return bad(
      'input[0]',
      'invalid_type',
      `input[0] must be a string, a token id or an array of token ids; got ${kind(first)}. ${SHAPES}`,
    )
  }
  if (input.length > MAX_INPUT_ITEMS) {
    return bad(
      'input',
      'invalid_value',
      `input has ${input.length} items; at most ${MAX_INPUT_ITEMS} are embedded per request. Split it into several requests.`,
    )
  }
  for (let i = 0; i < input.length; i++) {
    const item = input[i]
    const param = `input[${i}]`
    if (typeof first === 'string') {
      if (typeof item !== 'string') {
        return bad(param, 'invalid_type', `${param} must be a string like input[0]; got ${kind(item)}.`)
      }
      if (item === '') return bad(param, 'invalid_value', `${param} must not be an empty string.`)
    } else if (!Array.isArray(item)) {
      return bad(
        param,
        'invalid_type',
        `${param} must be an array of token ids like input[0]; got ${kind(item)}.`,
      )
    } else if (item.length === 0) {
      return bad(param, 'invalid_value', `${param} must not be an empty array of token ids.`)
    } else {
      const error = tokenIdsError(item, param)
      if (error) return error
    }
  }
  return invalid()
}

function invalid(): GatewayError {
  return bad('input', 'invalid_value', `input is not valid. ${SHAPES}`)
}

/** The first id that is not a token id, named; undefined when all are. */
function tokenIdsError(ids: unknown[], param: string): GatewayError | undefined {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_TOKEN_ID) {
      const at = `${param}[${i}]`
      return bad(
        at,
        'invalid_value',
        `${at} must be a token id (an integer from 0 to ${MAX_TOKEN_ID}); got ${kind(id)}.`,
      )
    }
  }
  return undefined
}

function bad(param: string, code: string, message: string): GatewayError {
  return new GatewayError(400, code, message, { param })
}

function kind(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'string') return value.length <= 40 ? JSON.stringify(value) : 'a long string'
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return 'a value that is not JSON'
}
