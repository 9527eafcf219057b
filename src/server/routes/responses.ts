/**
 * @module
 * `POST /v1/responses`: the OpenAI Responses surface on the request pipeline.
 */
import { Elysia } from 'elysia'
import type { Pipeline } from '../../pipeline/run.ts'
import { responsesSurface } from '../../surfaces/responses/index.ts'
import type { Traffic } from '../../traffic/traffic.ts'
import { answered } from './answer.ts'

export function responsesRoutes(traffic: Traffic, pipeline: Pipeline) {
  return new Elysia({ name: 'switchyard.responses' }).post(
    '/v1/responses',
    async ({ request, set, server }) => {
      const res = await pipeline.handle(
        responsesSurface,
        request,
        server,
        set.headers as Record<string, string>,
      )
      return answered(traffic, request, set, res)
    },
    { parse: 'none' },
  )
}
