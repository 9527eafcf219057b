/**
 * @module
 * `:embedContent` and `:batchEmbedContents` (the embeddings operation) in Google's shapes: one
 * `content` → `{"embedding": {"values"}}`; `requests[]` → `{"embeddings": [{"values"}]}`, in
 * order. A content's text parts are embedded as one text (joined by newlines), as Gemini embeds a
 * content whole. `outputDimensionality` is the vector length asked (one per batch: the canonical
 * request has one, `dimensions`). Gemini providers get the client's body (each request's `model`
 * set to the provider's name for it); the others the canonical request, without `taskType` and
 * `title`, which are named in `x-switchyard-dropped-params`. Gemini reports no token counts for
 * embeddings, so usage is estimated from the text (operations/embeddings.ts), on every route.
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { googleApiKey } from '../../auth/authenticate.ts'
import { upstreamModelName } from '../../config/models.ts'
import { compiledOnUse, validateWith } from '../../json/validation-error.ts'
import { estimatedUsage } from '../../limits/embedding-estimate.ts'
import type { EmbeddingsSurface } from '../../pipeline/surface.ts'
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
) {
  const target = targetOf(url)
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

function untranslated(view: GeminiEmbedView): string[] {
  const requests = (view.batch ? view.body.requests : [view.body]) as Json[]
  return UNTRANSLATED.filter((field) => requests.some((r) => r[field] !== undefined && r[field] !== null))
}

/** The client's body with each request's `model` the provider's name for it. */
function forwardBody(view: GeminiEmbedView, name: string): string {
  const model = `models/${name}`
  if (!view.batch) return JSON.stringify({ ...view.body, ...(view.body.model ? { model } : {}) })
  const requests = (view.body.requests as Json[]).map((r) => ({ ...r, model }))
  return JSON.stringify({ ...view.body, requests })
}

function embedSurface(isBatch: boolean): EmbeddingsSurface<GeminiEmbedView> {
  return {
    name: 'gemini',
    inputParam: isBatch ? 'requests' : 'content',
    operation: 'embeddings',
    credential: googleApiKey,
    decode: (text, limitsChecked, url) => decodeEmbed(text, limitsChecked, url, isBatch),
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
    untranslated,
    translate: (view, entry) => ({
      model: upstreamModelName(entry.model),
      input: { kind: 'text', items: view.texts },
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
      request: (view, entry) => {
        const name = upstreamModelName(entry.model)
        return {
          path: `/models/${encodeURIComponent(name)}:${view.method}`,
          body: forwardBody(view, name),
          headers: {},
        }
      },
      relayJson(text, ctx) {
        let parsed: Json
        try {
          parsed = JSON.parse(text) as Json
        } catch {
          throw invalidResponse(ctx.provider.prefix, 'the body is not JSON')
        }
        const ok = ctx.view.batch ? Array.isArray(parsed.embeddings) : parsed.embedding !== undefined
        if (!ok) throw invalidResponse(ctx.provider.prefix, 'the body holds no embeddings')
        return {
          body: text,
          usage: estimatedUsage({ kind: 'text', items: ctx.view.texts }, 'gemini', ctx.upstreamModel),
        }
      },
    },
    errorResponse: geminiErrorResponse,
  }
}

export const embedContentSurface = embedSurface(false)
export const batchEmbedContentsSurface = embedSurface(true)
