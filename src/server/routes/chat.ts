/**
 * @module
 * `POST /v1/chat/completions`: the Chat Completions surface on the request pipeline.
 */
import { Elysia } from 'elysia'
import type { Pipeline } from '../../pipeline/run.ts'
import { chatSurface } from '../../surfaces/chat/index.ts'

export function chatRoutes(pipeline: Pipeline) {
  return new Elysia({ name: 'switchyard.chat' }).post(
    '/v1/chat/completions',
    async ({ request, set, server }) => {
      const res = await pipeline.handle(chatSurface, request, server, set.headers as Record<string, string>)
      set.status = res.status // read by the metrics hook
      return res
    },
    { parse: 'none' },
  )
}
