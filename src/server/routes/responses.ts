/**
 * @module
 * `POST /v1/responses`: the OpenAI Responses surface on the request pipeline.
 */
import { Elysia } from 'elysia'
import type { Pipeline } from '../../pipeline/run.ts'
import { responsesSurface } from '../../surfaces/responses/index.ts'

export function responsesRoutes(pipeline: Pipeline) {
  return new Elysia({ name: 'switchyard.responses' }).post(
    '/v1/responses',
    async ({ request, set, server }) => {
      const res = await pipeline.handle(
        responsesSurface,
        request,
        server,
        set.headers as Record<string, string>,
      )
      set.status = res.status // read by the metrics hook
      return res
    },
    { parse: 'none' },
  )
}
