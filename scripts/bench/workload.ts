/**
 * @module
 * What the load generators send and what they report. One request shape for every scenario, so
 * direct-to-mock and through-the-gateway runs differ only in the hop being measured.
 */

export interface Target {
  url: string
  headers: Record<string, string>
  body: string
}

/** A closed- or open-loop run's outcome. Latencies in milliseconds. */
export interface LoadResult {
  tool: 'wrk' | 'bun'
  requests: number
  durationS: number
  rps: number
  p50Ms: number
  p99Ms: number
  /** Non-2xx answers, socket errors and timeouts. */
  errors: number
  errorDetail?: Record<string, number>
}

export const chatBody = (model: string, stream: boolean): string =>
  JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'You are a terse assistant.' },
      { role: 'user', content: 'Say hello to the benchmark in twenty words.' },
    ],
    max_tokens: 64,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  })

/** Direct to the mock (`base` ends in /v1) or through the gateway (`base` is its root URL). */
export function chatTarget(base: string, model: string, stream: boolean, key?: string): Target {
  const url = key ? `${base}/v1/chat/completions` : `${base}/chat/completions`
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (key) headers.authorization = `Bearer ${key}`
  return { url, headers, body: chatBody(model, stream) }
}

/** A streamed Messages request, direct to the Anthropic mock (no key) or through the gateway. */
export function messagesTarget(base: string, model: string, key?: string): Target {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': '2023-06-01',
    'x-api-key': key ?? 'x',
  }
  const body = JSON.stringify({
    model,
    max_tokens: 64,
    stream: true,
    system: 'You are a terse assistant.',
    messages: [{ role: 'user', content: 'Say hello to the benchmark in twenty words.' }],
  })
  return { url: `${base}/v1/messages`, headers, body }
}

export const responsesBody = (model: string, stream: boolean): string =>
  JSON.stringify({
    model,
    instructions: 'You are a terse assistant.',
    input: 'Say hello to the benchmark in twenty words.',
    max_output_tokens: 64,
    ...(stream ? { stream: true } : {}),
  })

/** `POST /v1/responses`, direct to the mock or through the gateway, as `chatTarget`. */
export function responsesTarget(base: string, model: string, stream: boolean, key?: string): Target {
  const url = key ? `${base}/v1/responses` : `${base}/responses`
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (key) headers.authorization = `Bearer ${key}`
  return { url, headers, body: responsesBody(model, stream) }
}

/**
 * A streamed Gemini request (`:streamGenerateContent?alt=sse`), direct to the Gemini mock (its own
 * model name, a dummy key) or through the gateway (`prefix/model` in the path).
 */
export function geminiTarget(base: string, model: string, key?: string): Target {
  const body = JSON.stringify({
    systemInstruction: { parts: [{ text: 'You are a terse assistant.' }] },
    contents: [{ role: 'user', parts: [{ text: 'Say hello to the benchmark in twenty words.' }] }],
    generationConfig: { maxOutputTokens: 64 },
  })
  const headers = { 'content-type': 'application/json', 'x-goog-api-key': key ?? 'x' }
  return { url: `${base}/v1beta/models/${model}:streamGenerateContent?alt=sse`, headers, body }
}

/**
 * Eight short texts, as a retrieval app embeds document chunks; base64 is the `openai` SDK's
 * default, float the API's (and what the AI SDK asks for).
 */
export const embeddingsBody = (model: string, format: 'base64' | 'float'): string =>
  JSON.stringify({
    model,
    input: Array.from(
      { length: 8 },
      (_, i) => `Document chunk ${i}: a switchyard sorts railway cars onto tracks.`,
    ),
    encoding_format: format,
  })

/** `POST /v1/embeddings`, direct to the mock or through the gateway, as `chatTarget`. */
export function embeddingsTarget(
  base: string,
  model: string,
  format: 'base64' | 'float',
  key?: string,
): Target {
  const url = key ? `${base}/v1/embeddings` : `${base}/embeddings`
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (key) headers.authorization = `Bearer ${key}`
  return { url, headers, body: embeddingsBody(model, format) }
}

/** The q-quantile (0..1) of an ascending array, nearest-rank. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[i]!
}

export function sortedCopy(xs: number[]): Float64Array {
  return Float64Array.from(xs).sort()
}

/** Prints the result line `runChild` looks for. */
export function emitResult(result: unknown): void {
  process.stdout.write(`BENCH_JSON ${JSON.stringify(result)}\n`)
}
