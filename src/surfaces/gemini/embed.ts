/**
 * @module
 * `:embedContent` and `:batchEmbedContents` (the embeddings operation) in Google's shapes: one
 * `content` → `{"embedding": {"values"}}`; `requests[]` → `{"embeddings": [{"values"}]}`, in
 * order. A content's text parts are embedded as one text (joined by newlines), as Gemini embeds a
 * content whole. `outputDimensionality` is the vector length asked (one per batch: the canonical
 * request has one, `dimensions`). Gemini providers get the client's body (each request's `model`
 * set to the provider's name for it; a batch of more than Gemini's 100 in parts of 100, one after
 * another, the answers joined in order, as `/v1/embeddings` on a gemini provider splits); the
 * others the canonical request (an openai provider as OpenAI's `POST /embeddings`), without
 * `taskType` and `title`, which are named in `x-switchyard-dropped-params`. Gemini reports no
 * token counts for embeddings, so usage is estimated from the text where the provider reports none.
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { googleApiKey } from '../../auth/authenticate.ts'
import { upstreamModelName } from '../../config/models.ts'
import { compiledOnUse, validateWith } from '../../json/validation-error.ts'
import { estimatedUsage } from '../../limits/embedding-estimate.ts'
import type { EmbeddingInput } from '../../operations/embeddings.ts'
import type { EmbeddingsSurface } from '../../pipeline/surface.ts'
import { GEMINI_BATCH_MAX } from '../../providers/gemini/embeddings.ts'
import { invalidResponse } from '../../providers/upstream-errors.ts'
import { GatewayError } from '../../util/errors.ts'
import { MAX_INPUT_ITEMS } from '../embeddings/request-schema.ts'
import { geminiErrorResponse } from './errors.ts'
import { Content } from './request-schema.ts'
import { geminiBody, targetOf } from './view.ts'

const Open = { additionalProperties: true } as const

const EmbedRequest = T.Object(
  {
    model: T.Optional(T.String()),
    content: Content,
    taskType: T.Optional(T.String()),
    title: T.Optional(T.String()),
    outputDimensionality: T.Optional(T.Integer({ minimum: 1 })),
  },
  Open,
)
const BatchRequest = T.Object(
  { requests: T.Array(EmbedRequest, { minItems: 1, maxItems: MAX_INPUT_ITEMS }) },
  Open,
)
const single = compiledOnUse(EmbedRequest)
const batch = compiledOnUse(BatchRequest)

type Json = Record<string, unknown>

export interface GeminiEmbedView {
  batch: boolean
  method: string
  body: Json
  texts: string[]
  dimensions: number | undefined
}

function textOf(content: Static<typeof Content>, param: string): string {
  return content.parts
    .map((part, j) => {
      if (typeof part.text !== 'string')
        throw new GatewayError(
          400,
          'invalid_value',
          `${param}.parts[${j}]: only text parts can be embedded.`,
          {
            param: `${param}.parts[${j}]`,
          },
        )
      return part.text
    })
    .join('\n')
}

function decodeEmbed(
  text: string,
  limitsChecked: boolean | undefined,
  url: string | undefined,
  isBatch: boolean,
  named: ((model: unknown) => void) | undefined,
) {
  const target = targetOf(url)
  named?.(target.model)
  const raw = geminiBody(text, limitsChecked)
  let requests: Array<Static<typeof EmbedRequest>>
  let prefix: (i: number) => string
  if (isBatch) {
    requests = validateWith(batch(), raw).requests
    prefix = (i) => `requests[${i}].`
  } else {
    requests = [validateWith(single(), raw)]
    prefix = () => ''
  }
  const dimensions = requests[0]!.outputDimensionality
  requests.forEach((r, i) => {
    if (r.outputDimensionality !== dimensions)
      throw new GatewayError(
        400,
        'invalid_value',
        `${prefix(i)}outputDimensionality differs from the first request's; send one length for the whole batch.`,
        { param: `${prefix(i)}outputDimensionality` },
      )
  })
  const texts = requests.map((r, i) => textOf(r.content, `${prefix(i)}content`))
  const view: GeminiEmbedView = { batch: isBatch, method: target.method, body: raw, texts, dimensions }
  return { model: target.model, view, stream: false }
}

/**
 * Gemini's fields the canonical request has no place for: `taskType` (what the vector is for) and
 * `title` (the document's), which an openai or demo model cannot take. Left out, named to the
 * client. (`outputDimensionality` is translated: the canonical `dimensions`.)
 */
const UNTRANSLATED = ['taskType', 'title'] as const

/** The texts the model reads, as the canonical input. */
const textsOf = (view: GeminiEmbedView): EmbeddingInput => ({ kind: 'text', items: view.texts })

function untranslated(view: GeminiEmbedView): string[] {
  const requests = (view.batch ? view.body.requests : [view.body]) as Json[]
  return UNTRANSLATED.filter((field) => requests.some((r) => r[field] !== undefined && r[field] !== null))
}

/**
 * The client's body with each request's `model` the provider's name for it; a batch of more than
 * Gemini's 100 requests in parts of at most 100, in order (their answers joined: `joinAnswers`).
 */
function forwardBodies(view: GeminiEmbedView, name: string): string[] {
  const model = `models/${name}`
  if (!view.batch) return [JSON.stringify({ ...view.body, ...(view.body.model ? { model } : {}) })]
  const requests = (view.body.requests as Json[]).map((r) => ({ ...r, model }))
  const bodies: string[] = []
  for (let start = 0; start < requests.length; start += GEMINI_BATCH_MAX)
    bodies.push(JSON.stringify({ ...view.body, requests: requests.slice(start, start + GEMINI_BATCH_MAX) }))
  return bodies
}

/**
 * The answers to `forwardBodies`' calls as one: each checked for an embedding per request it was
 * sent; one answer goes to the client as it came, several as their embeddings in order.
 */
function joinAnswers(texts: readonly string[], view: GeminiEmbedView, label: string): string {
  const embeddings: unknown[] = []
  for (let i = 0; i < texts.length; i++) {
    let parsed: Json
    try {
      parsed = JSON.parse(texts[i]!) as Json
    } catch {
      throw invalidResponse(label, 'the body is not JSON')
    }
    if (!view.batch) {
      if (parsed.embedding === undefined) throw invalidResponse(label, 'the body holds no embeddings')
      continue
    }
    const sent = Math.min(GEMINI_BATCH_MAX, view.texts.length - i * GEMINI_BATCH_MAX)
    if (!Array.isArray(parsed.embeddings) || parsed.embeddings.length !== sent)
      throw invalidResponse(label, `expected ${sent} embeddings, one per request`)
    embeddings.push(...parsed.embeddings)
  }
  return texts.length === 1 ? texts[0]! : JSON.stringify({ embeddings })
}

function embedSurface(isBatch: boolean): EmbeddingsSurface<GeminiEmbedView> {
  return {
    name: 'gemini',
    inputParam: isBatch ? 'requests' : 'content',
    operation: 'embeddings',
    credential: googleApiKey,
    decode: (text, limitsChecked, url, named) => decodeEmbed(text, limitsChecked, url, isBatch, named),
    checkLimits(view, entry) {
      const max = entry.model.dimensions
      if (view.dimensions !== undefined && max !== undefined && view.dimensions > max)
        throw new GatewayError(
          400,
          'invalid_value',
          `outputDimensionality is ${view.dimensions}, but this model's vectors have ${max}. Send at most ${max}.`,
          { param: isBatch ? 'requests[0].outputDimensionality' : 'outputDimensionality' },
        )
    },
    answerShape: (view) => ({ items: view.texts.length, dimensions: view.dimensions ?? null }),
    input: textsOf,
    untranslated,
    translate: (view, entry) => ({
      model: upstreamModelName(entry.model),
      input: textsOf(view),
      ...(view.dimensions === undefined ? {} : { dimensions: view.dimensions }),
    }),
    encode: (result, ctx) =>
      JSON.stringify(
        ctx.view.batch
          ? { embeddings: result.vectors.map((values) => ({ values })) }
          : { embedding: { values: result.vectors[0] } },
      ),
    forward: {
      kind: 'gemini',
      requests: (view, entry) => {
        const name = upstreamModelName(entry.model)
        const path = `/models/${encodeURIComponent(name)}:${view.method}`
        return forwardBodies(view, name).map((body) => ({ path, body, headers: {} }))
      },
      relayJson: (texts, ctx) => ({
        body: joinAnswers(texts, ctx.view, ctx.provider.prefix),
        usage: estimatedUsage({ kind: 'text', items: ctx.view.texts }, 'gemini', ctx.upstreamModel),
      }),
    },
    errorResponse: geminiErrorResponse,
  }
}

export const embedContentSurface = embedSurface(false)
export const batchEmbedContentsSurface = embedSurface(true)
