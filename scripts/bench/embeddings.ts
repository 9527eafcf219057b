/**
 * @module
 * The embeddings surface's per-request JS work, in one process, no sockets: decoding a body,
 * the demo's vectors, encoding the answer (float and base64), and the openai pass-through (the
 * body edited up, the upstream's answer relayed down). Batch shapes: 1 input and 100 inputs, at
 * 1536 dimensions (OpenAI's `text-embedding-3-small`) unless said. The whole request through the
 * gateway (keys, admission, usage, sockets) is `bun run bench`'s embeddings row (`embeddings-load.ts`).
 *
 * `bun scripts/bench/embeddings.ts [iterations]`
 */
import type { ProviderConfig } from '../../src/config/schema.ts'
import { demoVector } from '../../src/providers/demo/embeddings.ts'
import { encodeEmbeddings } from '../../src/surfaces/embeddings/encode.ts'
import { forwardEmbeddingsBody, relayEmbeddingsJson } from '../../src/surfaces/embeddings/forward.ts'
import { decodeEmbeddings } from '../../src/surfaces/embeddings/validate.ts'

const N = Number(process.argv[2] ?? 200)
const DIMS = 1536
const provider: ProviderConfig = {
  prefix: 'oai',
  kind: 'openai',
  models: [{ name: 'small', type: 'embedding', context_window: 8192, max_output_tokens: 0, features: [] }],
}

function time(label: string, iterations: number, run: () => unknown): void {
  for (let i = 0; i < Math.min(20, iterations); i++) run()
  const start = performance.now()
  for (let i = 0; i < iterations; i++) run()
  const us = ((performance.now() - start) * 1000) / iterations
  console.log(`${label.padEnd(52)} ${us.toFixed(1).padStart(10)} µs`)
}

for (const count of [1, 100]) {
  const texts = Array.from(
    { length: count },
    (_, i) => `document number ${i}: a paragraph of ordinary text to embed`,
  )
  const bodyText = JSON.stringify({ model: 'oai/small', input: texts, encoding_format: 'base64' })
  const view = decodeEmbeddings(bodyText)
  const vectors = texts.map((t) => demoVector(t, DIMS))
  const result = { vectors, usage: { prompt_tokens: count * 12, total_tokens: count * 12 } }
  const upstreamFloat = encodeEmbeddings(result, 'text-embedding-3-small', 'float')
  const upstreamBase64 = encodeEmbeddings(result, 'text-embedding-3-small', 'base64')
  const iterations = Math.max(5, Math.floor(N / count))
  console.log(
    `-- ${count} input(s), ${DIMS} dimensions (answer: float ${kb(upstreamFloat)}, base64 ${kb(upstreamBase64)})`,
  )
  time('decode (parse + schema + canonical input)', iterations * 10, () => decodeEmbeddings(bodyText))
  time('demo vectors', iterations, () => texts.map((t) => demoVector(t, DIMS)))
  time('encode float', iterations, () => encodeEmbeddings(result, 'oai/small', 'float'))
  time('encode base64', iterations, () => encodeEmbeddings(result, 'oai/small', 'base64'))
  time('pass-through up (model edited on the text)', iterations * 10, () =>
    forwardEmbeddingsBody(view, bodyText, 'text-embedding-3-small'),
  )
  time('pass-through down, base64 answer', iterations, () =>
    relayEmbeddingsJson(upstreamBase64, 'oai/small', view, provider),
  )
  time('pass-through down, float answer', iterations, () =>
    relayEmbeddingsJson(upstreamFloat, 'oai/small', view, provider),
  )
}

function kb(text: string): string {
  return `${(text.length / 1024).toFixed(0)} KiB`
}
