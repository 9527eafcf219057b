/**
 * @module
 * The embeddings operation's part of the pipeline: its checks before admission, its routes (the
 * model, then its fallbacks), and one attempt of the attempt loop (`attempts.ts`: retries, key
 * pools, fail-over are the loop's). Either route answers with one whole JSON body:
 *
 * | route     | before admission                                       | after admission                                   |
 * |-----------|--------------------------------------------------------|---------------------------------------------------|
 * | translate | surface limits, `translate`, `adapter.embeddings.check` | `adapter.embeddings.embed` → `surface.encode`     |
 * | forward   | surface limits                                         | `adapter.forward` → `surface.forward.relayJson`   |
 *
 * An attempt calls `finish` on success; a failure is returned for the loop to retry or `settle`.
 * A call sent in parts (Gemini's batches of 100) keeps, per route, the parts its upstream
 * answered: a retry of that route sends only the rest (`PartsAnswered`), so no part is asked — and
 * billed by the provider — twice; a fallback, another model, starts from none.
 */
import type { CatalogueEntry } from '../../catalogue/entry.ts'
import type { EmbeddingRequest, EmbeddingUsage } from '../../operations/embeddings.ts'
import { checkModelServes } from '../../operations/operation.ts'
import { embeddingsResponseBytes } from '../../providers/body-limit.ts'
import { readText } from '../../providers/http.ts'
import type { Resilience } from '../../providers/resilience/index.ts'
import type { ProviderAdapter } from '../../providers/types.ts'
import { droppedParamsHeader } from '../../providers/unserved-params.ts'
import { GatewayError } from '../../util/errors.ts'
import { aOrAn } from '../../util/text.ts'
import type { OperationAttempt, Targeted } from '../attempts.ts'
import type { Finish } from '../call-types.ts'
import { toGatewayError } from '../errors.ts'
import type { AdmittedOperation } from '../operation.ts'
import type { EmbeddingsSurface, EncodeContext, ForwardRequest } from '../surface.ts'

/**
 * What the checks chose: the client's body to pass through, or the canonical request to translate
 * with the response headers its translation adds (what the provider left out).
 */
export type EmbeddingsCall =
  | { forward: ForwardRequest[] }
  | { request: EmbeddingRequest; headers: Record<string, string> | undefined }

/** One target of an embeddings request and how the request reaches it. */
export interface EmbeddingsRoute extends Targeted {
  call: EmbeddingsCall
}

/** Runs before admission: every 400 here leaves the request uncounted. */
export function checkEmbeddings<View>(
  surface: EmbeddingsSurface<View>,
  view: View,
  entry: CatalogueEntry,
  adapter: ProviderAdapter,
  bodyText: string,
): EmbeddingsCall {
  surface.checkLimits(view, entry)
  if (surface.forward.kind === entry.provider.kind && adapter.forward) {
    return { forward: surface.forward.requests(view, entry, bodyText) }
  }
  // An openai provider's embeddings pass through on OpenAI's wire only; the config loader refuses
  // embedding models under kinds without embeddings (this is the backstop).
  if (!adapter.embeddings) {
    const kind = aOrAn(entry.provider.kind)
    throw new GatewayError(
      400,
      'model_not_supported',
      adapter.forward
        ? `'${entry.id}' cannot embed in this API's shape: ${kind} provider's embeddings are served in its own API's shape only (POST /v1/embeddings).`
        : `'${entry.id}' cannot embed: ${kind} provider has no embeddings.`,
      { param: 'model' },
    )
  }
  const request = surface.translate(view, entry)
  try {
    adapter.embeddings.check(request, entry.model)
  } catch (e) {
    throw inSurfaceTerms(e, surface.inputParam)
  }
  const leftOut = adapter.embeddings.leavesOut?.filter((field) => request[field] !== undefined) ?? []
  return { request, headers: droppedParamsHeader([...(surface.untranslated?.(view) ?? []), ...leftOut]) }
}

/**
 * A provider's check names the canonical request's `input` (`input`, `input[3]`); the client sent
 * the surface's field (Gemini's `requests`, `requests[3]`), named so in the param and the message.
 */
function inSurfaceTerms(e: unknown, inputParam: string): unknown {
  if (!(e instanceof GatewayError) || inputParam === 'input' || !e.param?.startsWith('input')) return e
  const param = inputParam + e.param.slice('input'.length)
  const message = e.message.startsWith(e.param) ? param + e.message.slice(e.param.length) : e.message
  return new GatewayError(e.status, e.code, message, { param, type: e.type, headers: e.headers })
}

/**
 * The primary's route, then one per fallback the request fits (`fallbacks`: those the plan and
 * key reach, in order): an embedding model, and passing the surface's limits and its provider's checks (a fallback that would refuse
 * the request is left out: the primary's answer stands for it).
 */
export function embeddingsRoutesFor<View>(
  surface: EmbeddingsSurface<View>,
  view: View,
  primary: { entry: CatalogueEntry; call: EmbeddingsCall },
  bodyText: string,
  resilience: Resilience,
  fallbacks: readonly CatalogueEntry[],
  adapterOf: (entry: CatalogueEntry) => ProviderAdapter,
): EmbeddingsRoute[] {
  const { entry } = primary
  const routes: EmbeddingsRoute[] = [
    { ...primary, target: resilience.target(entry.provider, entry.model, entry.id) },
  ]
  for (const fb of fallbacks) {
    try {
      checkModelServes(fb.model, 'embeddings', fb.id)
      const call = checkEmbeddings(surface, view, fb, adapterOf(fb), bodyText)
      routes.push({ entry: fb, target: resilience.target(fb.provider, fb.model, fb.id), call })
    } catch {}
  }
  return routes
}

/**
 * Whose count the answer's usage is: `upstream` (the provider reported it), or the gateway's
 * estimate where the provider reports none (Gemini's batch answer, the demo, a compatible server
 * without usage) — as count_tokens labels its estimates.
 */
export const TOKEN_COUNT_HEADER = 'x-switchyard-token-count'

/** A vector's length where neither the request nor the model's config says (OpenAI's largest). */
const DEFAULT_DIMENSIONS = 3072

/**
 * What a route's upstream answered of a call in parts, in order, kept across the request's
 * attempts: the passed-through parts' bodies, or the translated parts' vectors.
 */
interface PartsAnswered {
  bodies: string[]
  vectors: number[][][]
}

/** The embeddings operation's attempt: one whole JSON answer, passed through or translated. */
export function embeddingsAttempt<View>(
  surface: EmbeddingsSurface<View>,
  view: View,
  headers: Record<string, string>,
  finish: Finish,
): OperationAttempt<EmbeddingsRoute> {
  const shape = surface.answerShape(view)
  const kept = new Map<EmbeddingsRoute, PartsAnswered>()
  return async (route, { provider, adapter, ctx }) => {
    const { entry, call } = route
    let answered = kept.get(route)
    if (!answered) {
      answered = { bodies: [], vectors: [] }
      kept.set(route, answered)
    }
    // An answer of 2,048 long vectors is legitimately larger than the provider's default cap.
    ctx.maxResponseBytes = embeddingsResponseBytes(
      provider,
      shape.items,
      shape.dimensions ?? entry.model.dimensions ?? DEFAULT_DIMENSIONS,
    )
    const encodeCtx: EncodeContext<View> = {
      modelId: entry.id,
      upstreamModel: entry.model.upstream_name ?? entry.model.name,
      provider,
      requestId: ctx.requestId,
      view,
      includeUsage: false,
    }
    try {
      let out: { body: string; usage: EmbeddingUsage }
      let added: Record<string, string> | undefined
      if ('forward' in call) {
        const texts = answered.bodies
        for (const part of call.forward.slice(texts.length)) {
          const answer = await adapter.forward!(part, ctx)
          // Read here, under the provider's timeouts and max_response_bytes, so the relay is bounded.
          texts.push(await readText(answer, ctx))
        }
        try {
          out = surface.forward.relayJson(texts, encodeCtx)
        } catch (e) {
          // An answer that does not hold up is not kept: a retry asks for every part again.
          texts.length = 0
          throw e
        }
      } else {
        const result = await adapter.embeddings!.embed(call.request, ctx, answered.vectors)
        out = { body: surface.encode(result, encodeCtx), usage: result.usage }
        added = call.headers
      }
      // Embeddings produce no tokens: the record says 0, not unknown.
      finish(200, { prompt_tokens: out.usage.prompt_tokens, completion_tokens: 0 }, null, null)
      const response = new Response(out.body, {
        status: 200,
        headers: {
          ...headers,
          ...added,
          'content-type': 'application/json',
          [TOKEN_COUNT_HEADER]: out.usage.estimated ? `estimate; ${out.usage.estimated}` : 'upstream',
        },
      })
      return { ok: true, response }
    } catch (e) {
      const error = toGatewayError(e, 'upstream')
      return { ok: false, error, settle: () => finish(error.status, null, error, null) }
    }
  }
}

/** The embeddings operation: one whole JSON answer, passed through or translated; never capped. */
export const embeddingsOperation: AdmittedOperation<
  unknown,
  EmbeddingsSurface<unknown>,
  EmbeddingsCall,
  EmbeddingsRoute
> = {
  check: (p) => checkEmbeddings(p.surface, p.decoded.view, p.entry, p.adapter, p.text),
  routes: (p, call, fallbacks) =>
    embeddingsRoutesFor(
      p.surface,
      p.decoded.view,
      { entry: p.entry, call },
      p.text,
      p.deps.resilience,
      fallbacks,
      (fb) => p.deps.adapters.get(fb.provider.prefix)!,
    ),
  // The inputs alone: OpenAI bills their tokens, not the body's JSON (the model's name, `dimensions`).
  charged: (p) => ({ input: p.surface.input(p.decoded.view).items }),
  attempt: (p, routes, { finish }) => ({
    routes,
    attempt: embeddingsAttempt(p.surface, p.decoded.view, p.headers, finish),
  }),
}
