/**
 * @module
 * `POST /v1/chat/completions`: the Chat Completions surface on the request pipeline.
 */
import { Elysia } from 'elysia'
import type { Pipeline } from '../../pipeline/run.ts'
import { chatSurface } from '../../surfaces/chat/index.ts'
import type { Traffic } from '../../traffic/traffic.ts'
import { answered } from './answer.ts'

export function chatRoutes(traffic: Traffic, pipeline: Pipeline) {
  return new Elysia({ name: 'switchyard.chat' }).post(
    '/v1/chat/completions',
    async ({ request, set, server }) => {
      const res = await pipeline.handle(chatSurface, request, server, set.headers as Record<string, string>)
      return answered(traffic, request, set, res)
    },
    { parse: 'none' },
  )
}
