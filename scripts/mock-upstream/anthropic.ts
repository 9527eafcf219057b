/**
 * @module
 * A minimal Anthropic Messages upstream for the benchmark: `POST /v1/messages` answers the
 * recorded text stream (`anthropic-text.chunks.txt`, framed as Anthropic frames it) or the
 * recorded message, from bytes built once, so it costs the bench as little as the OpenAI mock.
 *
 * @example
 * const up = await startAnthropicMock()
 * // provider: { kind: 'anthropic', base_url: up.url, ... }
 */
import { join } from 'node:path'

const RECORDED = join(import.meta.dir, '..', '..', 'test', 'fixtures', 'reference', 'recorded')

export interface AnthropicMock {
  /** Base URL (no `/v1`). */
  url: string
  requests(): number
  stop(): Promise<void>
}

export async function startAnthropicMock(): Promise<AnthropicMock> {
  const lines = (await Bun.file(join(RECORDED, 'anthropic-text.chunks.txt')).text())
    .split('\n')
    .filter((l) => l.trim())
  const stream = new TextEncoder().encode(
    lines.map((l) => `event: ${(JSON.parse(l) as { type: string }).type}\ndata: ${l}\n\n`).join(''),
  )
  const message = await Bun.file(join(RECORDED, 'anthropic-text.json')).bytes()
  let count = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      if (req.method !== 'POST' || path !== '/v1/messages') return new Response('not found', { status: 404 })
      count++
      const body = (await req.json()) as { stream?: boolean }
      return body.stream
        ? new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
        : new Response(message, { headers: { 'content-type': 'application/json' } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests: () => count,
    stop: async () => {
      await server.stop(true)
    },
  }
}
