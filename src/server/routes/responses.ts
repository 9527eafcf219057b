/**
 * @module
 * `POST /v1/responses` (the OpenAI Responses surface on the request pipeline) and
 * `POST /v1/responses/input_tokens`.
 */
import { Elysia } from 'elysia'
import type { Pipeline } from '../../pipeline/run.ts'
import { responsesSurface } from '../../surfaces/responses/index.ts'
import { inputTokensSurface } from '../../surfaces/responses/input-tokens.ts'
import type { Traffic } from '../../traffic/traffic.ts'
import { answered } from './answer.ts'
import { COUNT_TOKENS_PER_SECOND } from './messages.ts'

export function responsesRoutes(traffic: Traffic, pipeline: Pipeline) {
  const inputTokens = inputTokensSurface(COUNT_TOKENS_PER_SECOND)
  return new Elysia({ name: 'switchyard.responses' })
    .post(
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
    .post(
      '/v1/responses/input_tokens',
      async ({ request, set, server }) => {
        const res = await pipeline.handle(inputTokens, request, server, set.headers as Record<string, string>)
        return answered(traffic, request, set, res)
      },
      { parse: 'none' },
    )
}
