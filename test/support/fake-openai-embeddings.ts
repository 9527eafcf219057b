/**
 * @module
 * A local stand-in for OpenAI's `POST /v1/embeddings`, speaking the real wire and refusing what
 * the real API refuses: a wrong key (401 `invalid_api_key`), an unknown model (404
 * `model_not_found`), an argument it does not know ("Unrecognized request argument supplied"), an
 * empty or mistyped `input` ("'$.input' is invalid"), more than 2048 inputs, `dimensions` on
 * `text-embedding-ada-002` or beyond the model's length, an `encoding_format` other than float or
 * base64. Vectors are deterministic unit vectors (float32), sent as numbers by default or as
 * base64 of little-endian float32 bytes; usage counts tokens with `cl100k_base`, the embedding
 * models' tokenizer.
 *
 * @example
 * const fake = await startFakeOpenAIEmbeddings({ apiKey: 'sk-up' })
 * // provider config: { kind: 'openai', base_url: `${fake.url}/v1`, api_key: 'sk-up', ... }
 * fake.lastRequest()?.body.encoding_format // 'base64' when the openai SDK sent it
 */
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base'
import { type FakeUpstream, serveFake } from './fake-upstream.ts'

export type { FakeUpstream, RecordedRequest } from './fake-upstream.ts'

/** The models it serves and their vector lengths (OpenAI's). */
export const OPENAI_EMBEDDING_MODELS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
}

const KNOWN = new Set(['model', 'input', 'dimensions', 'encoding_format', 'user'])

export function startFakeOpenAIEmbeddings(opts: { apiKey?: string } = {}): FakeUpstream<'embeddings'> {
  return serveFake({ fixture: 'embeddings' }, ({ request, recorded, url }) => {
    if (request.method !== 'POST' || url.pathname !== '/v1/embeddings') {
      return error(404, `Invalid URL (${request.method} ${url.pathname})`, 'invalid_request_error', null)
    }
    if (opts.apiKey && request.headers.get('authorization') !== `Bearer ${opts.apiKey}`) {
      return error(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key')
    }
    const body = recorded.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return error(400, 'We could not parse the JSON body of your request.', 'invalid_request_error', null)
    }
    for (const key of Object.keys(body)) {
      if (!KNOWN.has(key)) return error(400, `Unrecognized request argument supplied: ${key}`)
    }
    if (typeof body.model !== 'string') return error(400, 'you must provide a model parameter')
    const length = OPENAI_EMBEDDING_MODELS[body.model]
    if (length === undefined) {
      return error(
        404,
        `The model \`${body.model}\` does not exist or you do not have access to it.`,
        'invalid_request_error',
        'model_not_found',
      )
    }
    const inputs = readInput(body.input)
    if (!inputs) return invalid('input')
    if (inputs.length > 2048) return error(400, `'$.input' is invalid: at most 2048 inputs per request.`)
    const format = body.encoding_format ?? 'float'
    if (format !== 'float' && format !== 'base64') return invalid('encoding_format')
    if (body.user !== undefined && typeof body.user !== 'string') return invalid('user')
    let dims = length
    if (body.dimensions !== undefined) {
      if (body.model === 'text-embedding-ada-002')
        return error(400, 'This model does not support specifying dimensions.')
      if (!Number.isInteger(body.dimensions) || body.dimensions < 1 || body.dimensions > length) {
        return invalid('dimensions')
      }
      dims = body.dimensions
    }
    let tokens = 0
    const data = inputs.map((item, index) => {
      tokens += typeof item === 'string' ? countTokens(item) : item.length
      const vector = unitVector(typeof item === 'string' ? item : item.join(' '), dims)
      return {
        object: 'embedding',
        index,
        embedding: format === 'base64' ? base64(vector) : Array.from(vector),
      }
    })
    return Response.json(
      { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } },
      {
        headers: {
          'openai-model': body.model,
          'openai-processing-ms': '12',
          'x-request-id': `req_${Date.now()}`,
        },
      },
    )
  })
}

/** The items of a valid `input`, or null where OpenAI answers "'$.input' is invalid". */
function readInput(input: unknown): Array<string | number[]> | null {
  const isIds = (v: unknown): v is number[] =>
    Array.isArray(v) && v.length > 0 && v.every((id) => Number.isInteger(id) && id >= 0)
  if (typeof input === 'string') return input === '' ? null : [input]
  if (!Array.isArray(input) || input.length === 0) return null
  if (input.every((item) => typeof item === 'string' && item !== '')) return input as string[]
  if (isIds(input)) return [input]
  if (input.every(isIds)) return input as number[][]
  return null
}

/** A deterministic unit vector of float32 values for `key`. */
export function unitVector(key: string, length: number): Float32Array {
  let seed = 2166136261
  for (let i = 0; i < key.length; i++) seed = Math.imul(seed ^ key.charCodeAt(i), 16777619) >>> 0
  const out = new Float32Array(length)
  let sum = 0
  for (let i = 0; i < length; i++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0
    out[i] = seed / 2 ** 31 - 1
    sum += out[i]! * out[i]!
  }
  const norm = Math.sqrt(sum) || 1
  for (let i = 0; i < length; i++) out[i] = out[i]! / norm
  return out
}

function base64(vector: Float32Array): string {
  const bytes = new Uint8Array(vector.length * 4)
  const view = new DataView(bytes.buffer)
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i]!, true)
  return Buffer.from(bytes).toString('base64')
}

function invalid(field: string): Response {
  return error(
    400,
    `'$.${field}' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.`,
  )
}

function error(
  status: number,
  message: string,
  type = 'invalid_request_error',
  code: string | null = null,
): Response {
  return Response.json({ error: { message, type, param: null, code } }, { status })
}
