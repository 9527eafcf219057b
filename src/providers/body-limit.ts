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

/** One embedding value as float JSON at its longest (`-0.012345678901234567,`). */
const FLOAT_JSON_BYTES = 24
/** One embedding's object around its values (`{"object":"embedding","index":2047,"embedding":[]}`). */
const ITEM_BYTES = 128

/**
 * The cap for an embeddings answer of `items` vectors of `dimensions` values: the provider's, or —
 * when the provider sets none — what such an answer takes as float JSON, if that is more. OpenAI
 * takes 2,048 inputs a request and the AI SDK's `embedMany` sends that many as float: 1,536
 * dimensions are some 50 MB, past the 32 MiB default, which answered them 502.
 */
export function embeddingsResponseBytes(provider: ProviderConfig, items: number, dimensions: number): number {
  if (provider.max_response_bytes !== undefined) return provider.max_response_bytes
  return Math.max(
    DEFAULT_MAX_RESPONSE_BYTES,
    items * (dimensions * FLOAT_JSON_BYTES + ITEM_BYTES) + 1024 * 1024,
  )
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
 * How long a body read may wait: for each piece (`idleMs`) and in all (`totalMs`, from the first
 * read), and the error each wait past them ends the read with.
 */
export interface ReadTimeouts {
  idleMs: number
  totalMs: number
  idleError(): GatewayError
  totalError(): GatewayError
}

/**
 * The whole body as text, reading at most `limit` bytes: a larger `Content-Length`, or more bytes
 * than that arriving, → `responseTooLarge` with the body cancelled. With `timeouts`, a wait past
 * them → 504 `upstream_timeout` with the body cancelled. Other errors of the body itself (a cut
 * connection) pass through unchanged.
 *
 * One reader on the body itself, no stream stage in between (this runs on every JSON answer),
 * and one timer that re-arms itself only when it fires early.
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
  timeouts?: ReadTimeouts,
): Promise<string> {
  if (!body) return ''
  const tooLarge = () => responseTooLarge(label, limit, what)
  if (Number(headers.get('content-length') ?? '') > limit) {
    const err = tooLarge()
    await body.cancel(err).catch(() => {})
    throw err
  }
  const reader = body.getReader()
  const watch = timeouts ? new ReadWatch(reader, timeouts) : null
  const decoder = new TextDecoder()
  const pieces: string[] = []
  let size = 0
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      if (watch) watch.lastRead = performance.now()
      size += r.value.byteLength
      if (size > limit) {
        const err = tooLarge()
        reader.cancel(err).catch(() => {})
        throw err
      }
      pieces.push(decoder.decode(r.value, { stream: true }))
    }
  } catch (err) {
    throw watch?.failure ?? err
  } finally {
    watch?.stop()
  }
  // A timeout cancels the reader, which ends the pending read as if the body had ended.
  if (watch?.failure) throw watch.failure
  pieces.push(decoder.decode())
  return pieces.join('')
}

/** The idle and total deadlines of one body read; on either, the body is cancelled. */
class ReadWatch {
  lastRead = performance.now()
  failure: GatewayError | null = null
  private readonly deadline: number
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly onTimer = (): void => this.check()

  constructor(
    private readonly reader: { cancel(reason?: unknown): Promise<void> },
    private readonly timeouts: ReadTimeouts,
  ) {
    this.deadline = this.lastRead + timeouts.totalMs
    this.arm(this.lastRead)
  }

  stop(): void {
    clearTimeout(this.timer)
  }

  private arm(now: number): void {
    const at = Math.min(this.deadline, this.lastRead + this.timeouts.idleMs)
    this.timer = setTimeout(this.onTimer, Math.max(0, at - now))
  }

  private check(): void {
    const now = performance.now()
    if (now >= this.deadline) this.fail(this.timeouts.totalError())
    else if (now - this.lastRead >= this.timeouts.idleMs) this.fail(this.timeouts.idleError())
    else this.arm(now)
  }

  private fail(err: GatewayError): void {
    this.failure = err
    this.reader.cancel(err).catch(() => {})
  }
}
