/**
 * @module
 * `POST /v1/embeddings`: the Embeddings surface on the request pipeline.
 */
import { Elysia } from 'elysia'
import type { Pipeline } from '../../pipeline/run.ts'
import { embeddingsSurface } from '../../surfaces/embeddings/index.ts'
import type { Traffic } from '../../traffic/traffic.ts'
import { answered } from './answer.ts'

export function embeddingsRoutes(traffic: Traffic, pipeline: Pipeline) {
  return new Elysia({ name: 'switchyard.embeddings' }).post(
    '/v1/embeddings',
    async ({ request, set, server }) => {
      const res = await pipeline.handle(
        embeddingsSurface,
        request,
        server,
        set.headers as Record<string, string>,
      )
      return answered(traffic, request, set, res)
    },
    { parse: 'none' },
  )
}
