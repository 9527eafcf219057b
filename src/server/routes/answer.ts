/**
 * @module
 * How a route hands a finished `Response` to Elysia. Elysia copies a returned Response whenever
 * `set.headers` is not empty or `set.status` is not 200 (a Headers copy, a merge loop and a new
 * Response per request) to merge in what `set` holds. The pipeline's responses already carry
 * every header of `set` (request id, CORS, rate limits: it builds them from `set.headers`), so the
 * route empties `set` and the response leaves as it is. The status the client sees goes on the
 * exchange, where the access log and the metrics read it.
 *
 * @example
 * .post('/v1/chat/completions', async ({ request, set, server }) =>
 *   answered(traffic, request, set, await pipeline.handle(chatSurface, request, server, set.headers)))
 */
import type { Traffic } from '../../traffic/traffic.ts'

export function answered(
  traffic: Traffic,
  request: Request,
  set: { headers: unknown; status?: unknown },
  res: Response,
): Response {
  const ex = traffic.of(request)
  if (ex) ex.status = res.status
  set.headers = {}
  set.status = 200
  return res
}
