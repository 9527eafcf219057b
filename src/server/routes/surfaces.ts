/**
 * @module
 * The model surfaces' routes, one line each: the path and the surface (a codec over the canonical
 * forms, surfaces/) the request pipeline runs it through. The pipeline reads the body itself
 * (`parse: 'none'`). Claude Code adds `?beta=true` to the Messages paths; the query changes nothing.
 *
 * @example
 * new Elysia().use(surfaceRoutes(traffic, pipeline)) // POST /v1/chat/completions, /v1/messages, ...
 */
import { Elysia } from 'elysia'
import type { Pipeline, ServerHandle } from '../../pipeline/run.ts'
import type { Surface } from '../../pipeline/surface.ts'
import { chatSurface } from '../../surfaces/chat/index.ts'
import { embeddingsSurface } from '../../surfaces/embeddings/index.ts'
import { geminiSurfaces } from '../../surfaces/gemini/index.ts'
import { geminiTarget } from '../../surfaces/gemini/view.ts'
import { countTokensSurface } from '../../surfaces/messages/count-tokens.ts'
import { messagesSurface } from '../../surfaces/messages/index.ts'
import { responsesCompactSurface } from '../../surfaces/responses/compact.ts'
import { responsesSurface } from '../../surfaces/responses/index.ts'
import { inputTokensSurface } from '../../surfaces/responses/input-tokens.ts'
import type { Traffic } from '../../traffic/traffic.ts'
import { answered } from './answer.ts'

/**
 * Token-counting calls per second per key, on each counting endpoint (messages/count_tokens,
 * responses/input_tokens): they cost a tokenizer run or an upstream call.
 */
export const COUNT_TOKENS_PER_SECOND = 20

/** What a route's handler reads of Elysia's context. */
interface RouteContext {
  request: Request
  set: { headers: unknown; status?: unknown }
  server: ServerHandle | null
}

const NO_PARSE = { parse: 'none' } as const

export function surfaceRoutes(traffic: Traffic, pipeline: Pipeline) {
  // Built once, at start-up: a request allocates nothing here.
  const run =
    <View>(surface: Surface<View>) =>
    async ({ request, set, server }: RouteContext) =>
      answered(
        traffic,
        request,
        set,
        await pipeline.handle(surface, request, server, set.headers as Record<string, string>),
      )
  // Gemini's paths hold the model and the method (`/v1beta/models/{model}:{method}`): one route, the
  // surface by the method. `/v1/models/…` too, where `@google/genai` 3 sends by default.
  const geminiRuns = new Map(
    Object.entries(geminiSurfaces(COUNT_TOKENS_PER_SECOND)).map(([method, s]) => [method, run(s)]),
  )
  // A path with no method served here goes to the generation surface, which refuses it (404 in
  // Google's shape) after authentication, as every keyed route does.
  const generate = geminiRuns.get('generateContent')!
  const gemini = (ctx: RouteContext) =>
    (geminiRuns.get(geminiTarget(ctx.request.url)?.method ?? '') ?? generate)(ctx)
  return new Elysia({ name: 'switchyard.surfaces' })
    .post('/v1/chat/completions', run(chatSurface), NO_PARSE)
    .post('/v1/messages', run(messagesSurface), NO_PARSE)
    .post('/v1/messages/count_tokens', run(countTokensSurface(COUNT_TOKENS_PER_SECOND)), NO_PARSE)
    .post('/v1/responses', run(responsesSurface), NO_PARSE)
    .post('/v1/responses/input_tokens', run(inputTokensSurface(COUNT_TOKENS_PER_SECOND)), NO_PARSE)
    .post('/v1/responses/compact', run(responsesCompactSurface), NO_PARSE)
    .post('/v1/embeddings', run(embeddingsSurface), NO_PARSE)
    .post('/v1beta/models/*', gemini, NO_PARSE)
    .post('/v1/models/*', gemini, NO_PARSE)
}
