/**
 * @module
 * What the gateway will hold of one upstream answer: `providers[].max_response_bytes` (default
 * 32 MiB) caps a whole JSON body, an error body, and one SSE event. Past it → 502
 * `upstream_response_too_large`, and the rest is not read: the upstream body is cancelled, which
 * closes its connection. (Without a cap a 300 MB body took the gateway to 1.2 GB.)
 */
import type { ProviderConfig } from '../config/schema.ts'
import { GatewayError } from '../util/errors.ts'

export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024

export function maxResponseBytes(provider: ProviderConfig): number {
  return provider.max_response_bytes ?? DEFAULT_MAX_RESPONSE_BYTES
}

/** `what`: a noun phrase, e.g. "a response body", "a stream event". */
export function responseTooLarge(label: string, limit: number, what: string): GatewayError {
  return new GatewayError(
    502,
    'upstream_response_too_large',
    `Upstream '${label}' sent ${what} larger than ${limit} bytes (providers[].max_response_bytes); the gateway stopped reading it.`,
  )
}

/**
 * The whole body as text, reading at most `limit` bytes: a larger `Content-Length`, or more bytes
 * than that arriving, → `responseTooLarge` with the body cancelled. Errors of the body itself
 * (timeouts, a cut connection) pass through unchanged.
 *
 * @example
 * const text = await readCappedText(res.body, res.headers, maxResponseBytes(provider), 'openai', 'a response body')
 */
export async function readCappedText(
  body: ReadableStream<Uint8Array> | null,
  headers: Headers,
  limit: number,
  label: string,
  what: string,
): Promise<string> {
  if (!body) return ''
  const tooLarge = () => responseTooLarge(label, limit, what)
  if (Number(headers.get('content-length') ?? '') > limit) {
    const err = tooLarge()
    await body.cancel(err).catch(() => {})
    throw err
  }
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const pieces: string[] = []
  let size = 0
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    size += r.value.byteLength
    if (size > limit) {
      const err = tooLarge()
      reader.cancel(err).catch(() => {})
      throw err
    }
    pieces.push(decoder.decode(r.value, { stream: true }))
  }
  pieces.push(decoder.decode())
  return pieces.join('')
}
