/**
 * @module
 * A local stand-in for the Gemini API's `POST /v1beta/models/{model}:batchEmbedContents`,
 * speaking the real wire and refusing what the real API refuses, with Google's error shape
 * (`{"error": {"code", "message", "status", "details"}}`): a wrong `x-goog-api-key` (400
 * `API_KEY_INVALID`), an unknown model (404 `NOT_FOUND`), an unknown field anywhere in the body
 * (400 "Invalid JSON payload received. Unknown name ..."; proto JSON takes camelCase and
 * snake_case names alike), a request whose `model` is not the batch's, more than 100 requests in a
 * batch, a content without text, an `outputDimensionality` beyond the model's. Answers
 * `{"embeddings": [{"values": [...]}]}` in request order (no token counts: Gemini's batch answer has
 * none); a shortened vector is the full one cut off, unnormalised, as Gemini documents.
 *
 * @example
 * const fake = await startFakeGeminiEmbeddings({ apiKey: 'AIza-test' })
 * // provider config: { kind: 'gemini', base_url: fake.url, api_key: 'AIza-test', ... }
 * fake.lastRequest()?.body.requests[0].outputDimensionality
 */
import { unitVector } from './fake-openai-embeddings.ts'
import { type FakeUpstream, serveFake } from './fake-upstream.ts'

export type { FakeUpstream, RecordedRequest } from './fake-upstream.ts'

/** The embedding models it serves and their full vector lengths. */
export const GEMINI_EMBEDDING_MODELS: Record<string, number> = {
  'gemini-embedding-001': 3072,
  'text-embedding-004': 768,
}

const ROUTE = /^\/v1beta\/models\/([^/:]+):batchEmbedContents$/

/** Each message's fields, by proto JSON name (either spelling). */
const FIELDS: Record<string, Set<string>> = {
  batch: new Set(['requests']),
  request: new Set([
    'model',
    'content',
    'taskType',
    'task_type',
    'title',
    'outputDimensionality',
    'output_dimensionality',
  ]),
  content: new Set(['parts', 'role']),
  part: new Set(['text']),
}

export function startFakeGeminiEmbeddings(opts: { apiKey?: string } = {}): FakeUpstream<'embeddings'> {
  return serveFake({ fixture: 'embeddings' }, ({ request, recorded, url }) => {
    const route = ROUTE.exec(url.pathname)
    if (request.method !== 'POST' || !route) return error(404, 'NOT_FOUND', `Not found: ${url.pathname}`)
    if (opts.apiKey && request.headers.get('x-goog-api-key') !== opts.apiKey) return keyInvalid()
    const model = decodeURIComponent(route[1]!)
    const full = GEMINI_EMBEDDING_MODELS[model]
    if (full === undefined) {
      return error(
        404,
        'NOT_FOUND',
        `models/${model} is not found for API version v1beta, or is not supported for batchEmbedContents. Call ListModels to see the list of available models and their supported methods.`,
      )
    }
    const body = recorded.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return error(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Expected an object.')
    }
    const unknown = unknownField(body, 'batch', '')
    if (unknown) return unknown
    const requests = body.requests
    if (!Array.isArray(requests) || requests.length === 0) {
      return error(
        400,
        'INVALID_ARGUMENT',
        '* BatchEmbedContentsRequest.requests: requests must not be empty\n',
      )
    }
    if (requests.length > 100) {
      return error(
        400,
        'INVALID_ARGUMENT',
        '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n',
      )
    }
    const embeddings = []
    for (let i = 0; i < requests.length; i++) {
      const r = requests[i]
      const at = `BatchEmbedContentsRequest.requests[${i}]`
      if (r.model !== `models/${model}`) {
        return error(
          400,
          'INVALID_ARGUMENT',
          `* ${at}.model: the model of every request must be the batch's, models/${model}\n`,
        )
      }
      const parts = r.content?.parts
      const text = Array.isArray(parts)
        ? parts.map((p: { text?: unknown }) => (typeof p.text === 'string' ? p.text : '')).join('')
        : ''
      if (text === '') return error(400, 'INVALID_ARGUMENT', `* ${at}.content: contents must not be empty\n`)
      const dims = r.outputDimensionality ?? r.output_dimensionality ?? full
      if (!Number.isInteger(dims) || dims < 1 || dims > full) {
        return error(
          400,
          'INVALID_ARGUMENT',
          `* ${at}.output_dimensionality: must be between 1 and ${full}\n`,
        )
      }
      // Like Gemini: a shorter vector is the full one cut off, not normalised again.
      embeddings.push({ values: Array.from(unitVector(text, full).subarray(0, dims)) })
    }
    return Response.json({ embeddings })
  })
}

/** Google's refusal of a field the message does not have, as its proto JSON parser words it. */
function unknownField(value: Record<string, unknown>, message: string, at: string): Response | null {
  for (const key of Object.keys(value)) {
    if (!FIELDS[message]!.has(key)) {
      const where = at ? ` at '${at}'` : ''
      return error(
        400,
        'INVALID_ARGUMENT',
        `Invalid JSON payload received. Unknown name "${key}"${where}: Cannot find field.`,
        [
          {
            '@type': 'type.googleapis.com/google.rpc.BadRequest',
            fieldViolations: [
              {
                field: at,
                description: `Invalid JSON payload received. Unknown name "${key}"${where}: Cannot find field.`,
              },
            ],
          },
        ],
      )
    }
  }
  const children: Array<[string, string]> =
    message === 'batch'
      ? [['requests', 'request']]
      : message === 'request'
        ? [['content', 'content']]
        : message === 'content'
          ? [['parts', 'part']]
          : []
  for (const [field, child] of children) {
    const v = value[field]
    const items = Array.isArray(v) ? v : v === undefined ? [] : [v]
    for (let i = 0; i < items.length; i++) {
      if (items[i] === null || typeof items[i] !== 'object') continue
      const path = `${at ? `${at}.` : ''}${field}${Array.isArray(v) ? `[${i}]` : ''}`
      const found = unknownField(items[i], child, path)
      if (found) return found
    }
  }
  return null
}

function keyInvalid(): Response {
  return error(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'API_KEY_INVALID',
      domain: 'googleapis.com',
      metadata: { service: 'generativelanguage.googleapis.com' },
    },
  ])
}

function error(code: number, status: string, message: string, details?: unknown[]): Response {
  return Response.json(
    { error: { code, message, status, ...(details ? { details } : {}) } },
    { status: code },
  )
}
