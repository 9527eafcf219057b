/**
 * @module
 * A minimal Gemini API upstream for the benchmark: `POST /v1beta/models/{model}:streamGenerateContent`
 * answers the recorded text stream (`gemini-text.chunks.txt`, framed `data: …\r\n\r\n` as Google
 * frames it), `:generateContent` the recorded response, from bytes built once, so it costs the
 * bench as little as the OpenAI mock.
 *
 * @example
 * const up = await startGeminiMock()
 * // provider: { kind: 'gemini', base_url: up.url, ... }
 */
import { join } from 'node:path'

const RECORDED = join(import.meta.dir, '..', '..', 'test', 'fixtures', 'reference', 'recorded')
const ROUTE = /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/

export interface GeminiMock {
  /** Base URL (no `/v1beta`). */
  url: string
  requests(): number
  stop(): Promise<void>
}

export async function startGeminiMock(): Promise<GeminiMock> {
  const lines = (await Bun.file(join(RECORDED, 'gemini-text.chunks.txt')).text())
    .split('\n')
    .filter((l) => l.trim())
  const stream = new TextEncoder().encode(lines.map((l) => `data: ${l}\r\n\r\n`).join(''))
  const json = await Bun.file(join(RECORDED, 'gemini-text.json')).bytes()
  let count = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const m = ROUTE.exec(new URL(req.url).pathname)
      if (req.method !== 'POST' || !m) return new Response('not found', { status: 404 })
      count++
      await req.arrayBuffer()
      return m[1] === 'streamGenerateContent'
        ? new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
        : new Response(json, { headers: { 'content-type': 'application/json' } })
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
