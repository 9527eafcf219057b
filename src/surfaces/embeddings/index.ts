/**
 * @module
 * The OpenAI Embeddings surface (`POST /v1/embeddings`) on the pipeline, serving the embeddings
 * operation. openai providers take the client's body as it is (model swapped: `encoding_format`,
 * `dimensions`, `user` and fields OpenAI has not reach them as sent); gemini and demo take the
 * canonical request — a field OpenAI's request has not is refused there by name — and the answer
 * is encoded here in the format the client asked for (`float`, or `base64` as the `openai` SDK
 * asks by default).
 *
 * @example
 * pipeline.handle(embeddingsSurface, request, server, headers)
 */
import { bearer } from '../../auth/authenticate.ts'
import { upstreamModelName } from '../../config/models.ts'
import type { EmbeddingsSurface } from '../../pipeline/surface.ts'
import { errorResponse } from '../../util/errors.ts'
import { encodeEmbeddings } from './encode.ts'
import { EMBEDDINGS_PATH, forwardEmbeddingsBody, relayEmbeddingsJson } from './forward.ts'
import { checkEmbeddingLimits } from './limits.ts'
import { EMBEDDINGS_JSON_LIMITS } from './request-schema.ts'
import { decodeEmbeddings, type EmbeddingsView, refuseUnknownFields } from './validate.ts'

export const embeddingsSurface: EmbeddingsSurface<EmbeddingsView> = {
  name: 'embeddings',
  inputParam: 'input',
  operation: 'embeddings',
  credential: (headers) => bearer(headers.get('authorization')),
  jsonLimits: EMBEDDINGS_JSON_LIMITS,
  decode(text, limitsChecked, _url, named) {
    const view = decodeEmbeddings(text, limitsChecked, named)
    return { model: view.body.model, view, stream: false }
  },
  checkLimits: (view, entry) => checkEmbeddingLimits(view, entry.model),
  answerShape: (view) => ({ items: view.input.items.length, dimensions: view.body.dimensions ?? null }),
  input: (view) => view.input,
  translate(view, entry) {
    refuseUnknownFields(view.body, entry.id, entry.provider.kind)
    return {
      model: upstreamModelName(entry.model),
      input: view.input,
      dimensions: view.body.dimensions,
      user: view.body.user,
    }
  },
  encode: (result, ctx) => encodeEmbeddings(result, ctx.modelId, ctx.view.body.encoding_format ?? 'float'),
  forward: {
    kind: 'openai',
    requests: (view, entry, text) => [
      {
        path: EMBEDDINGS_PATH,
        body: forwardEmbeddingsBody(view, text, upstreamModelName(entry.model)),
        headers: {},
      },
    ],
    relayJson: ([text], ctx) =>
      relayEmbeddingsJson(text!, ctx.modelId, ctx.view, ctx.provider, ctx.upstreamModel),
  },
  errorResponse,
}
