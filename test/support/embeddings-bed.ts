/**
 * @module
 * A stand-in for the pipeline while it is being reorganised (issue 19): serves `POST
 * /v1/embeddings` on 127.0.0.1, port 0, from the embeddings surface's own parts and the providers'
 * real calls — decode, the operation check, limits, then openai pass-through (the adapter's
 * `forward` to `/embeddings`) or the translated call (gemini, demo), then the encoder. No keys,
 * plans or usage: those are the pipeline's, and the tests move to the real gateway once it
 * serves the route. What it proves now is that real clients accept what the surface sends.
 *
 * @example
 * const bed = startEmbeddingsBed(testConfigDoc({ providers: [...] }))
 * new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: 'unused' }).embeddings.create({ model: 'demo/embed', input: 'hi' })
 */
import { parseConfig } from '../../src/config/index.ts'
import { checkModelServes } from '../../src/operations/operation.ts'
import { createEmbeddingCalls } from '../../src/providers/embedding-calls.ts'
import { readText, resolveTimeouts } from '../../src/providers/http.ts'
import { createAdapters } from '../../src/providers/index.ts'
import type { CallContext } from '../../src/providers/types.ts'
import { upstreamModelName } from '../../src/surfaces/chat/defaults.ts'
import { encodeEmbeddings } from '../../src/surfaces/embeddings/encode.ts'
import {
  EMBEDDINGS_PATH,
  forwardEmbeddingsBody,
  relayEmbeddingsJson,
} from '../../src/surfaces/embeddings/forward.ts'
import { checkEmbeddingLimits } from '../../src/surfaces/embeddings/limits.ts'
import { decodeEmbeddings } from '../../src/surfaces/embeddings/validate.ts'
import { GatewayError } from '../../src/util/errors.ts'

export interface EmbeddingsBed {
  url: string
  /** Every request body the bed answered, as the client sent it. */
  bodies: unknown[]
  stop(): Promise<void>
}

export function startEmbeddingsBed(doc: Record<string, unknown>): EmbeddingsBed {
  const config = parseConfig(doc, 'embeddings-bed')
  const adapters = createAdapters(config.providers)
  const bodies: unknown[] = []
  let n = 0

  const answer = async (request: Request): Promise<Response> => {
    const text = await request.text()
    bodies.push(safeParse(text))
    const view = decodeEmbeddings(text)
    const id = view.body.model
    const slash = id.indexOf('/')
    const provider = config.providers.find((p) => p.prefix === id.slice(0, slash))
    const model = provider?.models.find((m) => m.name === id.slice(slash + 1))
    if (!provider || !model)
      throw new GatewayError(404, 'model_not_found', `no model '${id}'`, { param: 'model' })
    checkModelServes(model, 'embeddings', id)
    checkEmbeddingLimits(view, model)
    const ctx: CallContext = {
      provider,
      model,
      signal: request.signal,
      requestId: `bed_${++n}`,
      timeouts: resolveTimeouts(provider),
    }
    const upstreamName = upstreamModelName(model)
    const json = { 'content-type': 'application/json' }
    if (provider.kind === 'openai') {
      const body = forwardEmbeddingsBody(view, text, upstreamName)
      const res = await adapters.get(provider.prefix)!.forward!(
        { path: EMBEDDINGS_PATH, body, headers: {} },
        ctx,
      )
      const relayed = relayEmbeddingsJson(await readText(res, ctx), id, view, provider)
      return new Response(relayed.body, { headers: json })
    }
    const calls = createEmbeddingCalls(provider)!
    const req = {
      model: upstreamName,
      input: view.input,
      dimensions: view.body.dimensions,
      user: view.body.user,
    }
    calls.check(req, model)
    const result = await calls.embed(req, ctx)
    return new Response(encodeEmbeddings(result, id, view.body.encoding_format ?? 'float'), { headers: json })
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      if (request.method !== 'POST' || new URL(request.url).pathname !== '/v1/embeddings') {
        return new Response('not found', { status: 404 })
      }
      try {
        return await answer(request)
      } catch (err) {
        const e = err instanceof GatewayError ? err : new GatewayError(500, 'internal_error', String(err))
        return Response.json(e.toBody(), { status: e.status })
      }
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, bodies, stop: () => server.stop(true) }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
