/**
 * @module
 * `POST /v1/messages` (the Anthropic Messages surface on the request pipeline) and
 * `POST /v1/messages/count_tokens`. Claude Code adds `?beta=true`; the query changes nothing.
 */
import { Elysia } from 'elysia'
import type { Pipeline } from '../../pipeline/run.ts'
import { countTokensSurface } from '../../surfaces/messages/count-tokens.ts'
import { messagesSurface } from '../../surfaces/messages/index.ts'
import type { Deps } from '../deps.ts'
import { answered } from './answer.ts'

/**
 * Token-counting calls per second per key, on each counting endpoint (count_tokens here,
 * responses/input_tokens): they cost a tokenizer run or an upstream call.
 */
export const COUNT_TOKENS_PER_SECOND = 20

export function messagesRoutes(deps: Deps, pipeline: Pipeline) {
  const countTokens = countTokensSurface(COUNT_TOKENS_PER_SECOND)
  return new Elysia({ name: 'switchyard.messages' })
    .post(
      '/v1/messages',
      async ({ request, set, server }) => {
        const headers = set.headers as Record<string, string>
        const res = await pipeline.handle(messagesSurface, request, server, headers)
        return answered(deps.traffic, request, set, res)
      },
      { parse: 'none' },
    )
    .post(
      '/v1/messages/count_tokens',
      async ({ request, set, server }) => {
        const res = await pipeline.handle(countTokens, request, server, set.headers as Record<string, string>)
        return answered(deps.traffic, request, set, res)
      },
      { parse: 'none' },
    )
}
