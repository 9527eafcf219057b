/**
 * @module
 * The embeddings operation's part of the pipeline: its checks before admission and its call
 * after. Either route answers with one whole JSON body:
 *
 * | route     | before admission                                       | after admission                                   |
 * |-----------|--------------------------------------------------------|---------------------------------------------------|
 * | translate | surface limits, `translate`, `adapter.embeddings.check` | `adapter.embeddings.embed` → `surface.encode`     |
 * | forward   | surface limits                                         | `adapter.forward` → `surface.forward.relayJson`   |
 *
 * `finish` is called exactly once per admitted request, with the status the client saw.
 */
import type { CatalogueEntry } from '../catalogue/routing.ts'
import type { EmbeddingRequest, EmbeddingUsage } from '../operations/embeddings.ts'
import { readText } from '../providers/http.ts'
import type { CallContext, EmbeddingCalls, ProviderAdapter } from '../providers/types.ts'
import { GatewayError } from '../util/errors.ts'
import { asGatewayError, type Finish } from './call.ts'
import type { EmbeddingsSurface, EncodeContext, ForwardRequest } from './surface.ts'

/** What the checks chose: the client's body to pass through, or the canonical request to translate. */
export type EmbeddingsCall =
  | { forward: ForwardRequest }
  | { request: EmbeddingRequest; calls: EmbeddingCalls }

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
    return { forward: surface.forward.request(view, entry, bodyText) }
  }
  const calls = adapter.embeddings
  // The config loader refuses embedding models under kinds without embeddings; this is the backstop.
  if (!calls) {
    throw new GatewayError(
      400,
      'model_not_supported',
      `'${entry.id}' cannot embed: a ${entry.provider.kind} provider has no embeddings.`,
      { param: 'model' },
    )
  }
  const request = surface.translate(view, entry)
  calls.check(request, entry.model)
  return { request, calls }
}

export interface EmbeddingsProviderCall<View> {
  surface: EmbeddingsSurface<View>
  adapter: ProviderAdapter
  ctx: CallContext
  encodeCtx: EncodeContext<View>
  call: EmbeddingsCall
  headers: Record<string, string>
  finish: Finish
}

export async function callEmbeddings<View>(p: EmbeddingsProviderCall<View>): Promise<Response> {
  const { call, ctx } = p
  try {
    let out: { body: string; usage: EmbeddingUsage }
    if ('forward' in call) {
      const answer = await p.adapter.forward!(call.forward, ctx)
      // Read here, under the provider's timeouts and max_response_bytes, so the relay is bounded.
      out = p.surface.forward.relayJson(await readText(answer, ctx), p.encodeCtx)
    } else {
      const result = await call.calls.embed(call.request, ctx)
      out = { body: p.surface.encode(result, p.encodeCtx), usage: result.usage }
    }
    // Embeddings produce no tokens: the record says 0, not unknown.
    p.finish(200, { prompt_tokens: out.usage.prompt_tokens, completion_tokens: 0 }, null, null)
    return new Response(out.body, {
      status: 200,
      headers: { ...p.headers, 'content-type': 'application/json' },
    })
  } catch (e) {
    const err = asGatewayError(e)
    p.finish(err.status, null, err, null)
    throw err
  }
}
