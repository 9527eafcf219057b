/**
 * @module
 * Reading a JSON request body with the gateway's own checks: content type and encoding (415),
 * size (413), time (408: a body trickled in to hold a socket) and JSON structure (400,
 * `json/limits.ts`), enforced while reading so neither a chunked upload nor a hostile body
 * costs more than the limits allow.
 */
import {
  DEFAULT_JSON_LIMITS,
  type JsonLimits,
  JsonStructureScanner,
  withinJsonLimits,
} from '../json/limits.ts'
import { jsonLimitError } from '../json/parse-json-body.ts'
import { GatewayError } from '../util/errors.ts'
import { clip } from '../util/text.ts'
import { watchDeadline, within } from './body-deadline.ts'

export function tooLarge(limit: number): GatewayError {
  return new GatewayError(
    413,
    'request_too_large',
    `Request body is larger than the ${limit}-byte limit; send less (e.g. smaller images).`,
  )
}

export function bodyTimeout(ms: number): GatewayError {
  return new GatewayError(
    408,
    'request_timeout',
    `The request body did not arrive within ${ms / 1000} s; send it at once (server.body_timeout_s).`,
    // The rest of the body may still be on its way: the connection is not reused but let go.
    { headers: { connection: 'close' } },
  )
}

/**
 * The body's deadline: `late` rejects with the 408 once `ms` have passed, or with `stop`'s reason
 * once it aborts (the shutdown's drain deadline: a body still arriving then is cut like a stream,
 * never left unanswered), calling `onLate` after rejecting. Without a deadline a valid key could
 * hold thousands of sockets open by trickling bodies in (admission comes after the body). One per
 * body, raced by every read of it (body-deadline.ts: no timer or listener of its own).
 */
function bodyDeadline(
  ms: number,
  onLate: () => void,
  stop?: AbortSignal,
): { late: Promise<never>; clear: () => void } {
  let fail!: (reason: unknown) => void
  const late = new Promise<never>((_, reject) => {
    fail = reject
  })
  late.catch(() => {}) // raced by each read; settled between reads, the next read sees it
  return { late, clear: watchDeadline(ms, () => bodyTimeout(ms), fail, onLate, stop) }
}

export function checkJsonContentType(request: Request): void {
  const ct = request.headers.get('content-type')
  // A missing Content-Type is read as JSON (some clients omit it); a different one is refused.
  if (ct && !/^application\/([\w.+-]*\+)?json\b/i.test(ct.trim())) {
    throw new GatewayError(
      415,
      'unsupported_media_type',
      `Content-Type '${clip(ct)}' is not supported; send the body as JSON with Content-Type: application/json.`,
    )
  }
}

/**
 * A `Content-Encoding` other than identity → 415 naming it, with `accept-encoding: identity` (RFC
 * 7694). Bodies are read as sent: a gzip body was a 400 "unexpected character \u001f", a `br` one
 * was parsed as if it were not compressed.
 */
export function checkContentEncoding(request: Request): void {
  const header = request.headers.get('content-encoding')
  if (header === null) return
  const coding = header
    .split(',')
    .map((c) => c.trim())
    .find((c) => c !== '' && c.toLowerCase() !== 'identity')
  if (coding === undefined) return
  throw new GatewayError(
    415,
    'unsupported_content_encoding',
    `Content-Encoding '${clip(coding)}' is not supported; send the body uncompressed, without a Content-Encoding header.`,
    { headers: { 'accept-encoding': 'identity' } },
  )
}

/**
 * The body as text, sent without a content coding (else 415). More than `limit` bytes → 413,
 * declared or counted (a chunked upload cannot exceed it either). A JSON structure that breaks
 * `json`'s limits → the same 400 `parseJsonBody` would give. The pipeline tells the surface decoder
 * the limits were checked here, so a valid body is scanned once.
 *
 * Memory (DESIGN §16: a body costs about its own size while in flight): the bytes land in one
 * buffer — sized by the Content-Length, or grown as a chunked body arrives — and are decoded once;
 * each socket piece's memory goes as soon as it is copied. The buffer is detached once decoded: its
 * memory is taken again by the next allocation (`release`), so only the text is left for the
 * collector (`large-bodies.ts`). Pieces decoded to strings and joined cost three to four times the
 * body (issue 42).
 * Time: a large body's first `SCANNED_WHILE_READING` bytes are scanned as they arrive, so 10 MB of
 * `[` or of `{"a":` is refused after its first pieces, not after all of it has been read (issue 9:
 * three clients looping such bodies held `/healthz` for seconds).
 */
export async function readBodyText(
  request: Request,
  limit: number,
  timeoutMs: number,
  json: JsonLimits = DEFAULT_JSON_LIMITS,
  stop?: AbortSignal,
): Promise<string> {
  checkContentEncoding(request)
  const header = request.headers.get('content-length')
  const declared = header === null ? Number.NaN : Number(header)
  if (declared > limit) throw tooLarge(limit)
  // A declared small body is read without `request.body`: that getter makes a ReadableStream and
  // its native source a request, which `bytes()` does not need; a body of none reads empty.
  let bytes: Uint8Array
  const small = declared <= WHOLE_READ_MAX
  if (small) bytes = await readDeclared(request, timeoutMs, stop)
  else if (!request.body) return ''
  else
    bytes = await readScanning(request.body, declared, limit, timeoutMs, json, stop).catch((err) => {
      cutShort.add(request)
      throw err
    })
  // HTTP framing read the declared length; a Request built in code may carry more.
  if (bytes.byteLength > limit) throw tooLarge(limit)
  const text = UTF8.decode(bytes)
  // A small body's bytes die young with its request: detaching them costs more (~1.4 µs of a
  // plain request, two native calls) than the memory it gives back early.
  if (bytes.byteLength >= RELEASED_FROM) release(bytes)
  // A large body's bytes were scanned as read. A small body: the quick check says yes to almost
  // every one, the scanner runs only to say what broke.
  if (!small) return text
  const err = withinJsonLimits(text, json) ? null : jsonLimitError(text, json)
  if (err) throw err
  return text
}

/** Requests whose body a read gave up on midway (413 counted, a JSON limit, 408): the rest unread. */
const cutShort = new WeakSet<Request>()

/**
 * `answer`, closing the connection (`Connection: close`) when it goes out before `request`'s body
 * was read to the end — never started (401, 404, a declared 413, a page or `/healthz` that takes
 * no body) or given up midway (413 counted, a JSON limit). Bun answers such a request and keeps the
 * socket, discarding the rest of the body as it comes: with none coming, until its idle timeout,
 * or for good once a route has lifted that (idle-exemption.ts). Applied to every answer where it
 * leaves (app/serve.ts). A request with no body, or one read whole, keeps its connection.
 */
export function letGoUnread(request: Request, answer: Response): Response {
  if (request.bodyUsed && !cutShort.has(request)) return answer
  const length = request.headers.get('content-length')
  const declares = length === null ? request.headers.has('transfer-encoding') : length !== '0'
  if (!declares) return answer
  // A new response, not the same one's headers set: a response may carry immutable headers.
  const headers = new Headers(answer.headers)
  headers.set('connection', 'close')
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers })
}

/** One decoder for every whole body (`decode` without `stream` keeps no state between calls). */
const UTF8 = new TextDecoder()

/** Bodies of this many bytes or more have their buffer let go at once when decoded (`release`). */
const RELEASED_FROM = 64 * 1024

/** Declared bodies up to this size are read in one native call and checked whole. */
const WHOLE_READ_MAX = 256 * 1024

/**
 * How much of a larger body is scanned while it arrives: the hostile shapes break a limit within it
 * (100,000 elements of `{"a":` is 500 KB); the rest of a body that passes is scanned once read, in
 * one pass over the buffer, before it is decoded.
 */
const SCANNED_WHILE_READING = 1024 * 1024

/** A small body with a Content-Length: one native read into one buffer of that size. */
function readDeclared(request: Request, timeoutMs: number, stop?: AbortSignal): Promise<Uint8Array> {
  // A rejected read (the closed socket after a 408) is handled by `within`.
  return within(request.bytes(), timeoutMs, () => bodyTimeout(timeoutMs), noop, stop)
}

const noop = () => {}

/** The first size of a large body's buffer; it doubles as pieces arrive (never past `limit`). */
const FIRST_BUFFER = 64 * 1024

/**
 * A larger or chunked body, read piece by piece into one buffer (`declared` bytes, or grown),
 * counted (past `limit` → 413 without reading on) and checked against `json`'s limits: its first
 * `SCANNED_WHILE_READING` bytes as they come, the rest once read. The scan reads the bytes
 * (`JsonStructureScanner.feed`): no string is made before the one decode of the whole body, and
 * an 8 MB body's read takes ~9 ms of CPU where decoding the head piece by piece and scanning the
 * text took ~14 (docs/benchmarks/hostile-input.md, stop 66 mendY66).
 */
async function readScanning(
  body: ReadableStream<Uint8Array>,
  declared: number,
  limit: number,
  timeoutMs: number,
  json: JsonLimits,
  stop?: AbortSignal,
): Promise<Uint8Array> {
  const reader = body.getReader()
  // Grown while the scanned head arrives, the declared size at once after it: a hostile body is
  // refused in its head without a buffer of its whole declared size ever being allocated.
  const cap = Number.isNaN(declared) ? limit : declared
  let buffer = new Uint8Array(Math.min(FIRST_BUFFER, cap))
  let size = 0
  const scanner = new JsonStructureScanner(json)
  let scanned = 0
  // What was read so far says what broke, as `parseJsonBody` would say it.
  const refuse = () => jsonLimitError(UTF8.decode(buffer.subarray(0, size)), json)
  const cancel = () => void reader.cancel().catch(() => {})
  // One deadline for the whole body, not per piece: a piece every second would never be late.
  const deadline = bodyDeadline(timeoutMs, cancel, stop)
  const read = () => Promise.race([reader.read(), deadline.late])
  try {
    for (let r = await read(); !r.done; r = await read()) {
      const piece = r.value
      if (size + piece.byteLength > limit) throw tooLarge(limit)
      if (size + piece.byteLength > buffer.byteLength) {
        const needed = size + piece.byteLength
        const grown = new Uint8Array(
          needed > SCANNED_WHILE_READING && cap === declared
            ? Math.max(declared, needed)
            : Math.min(cap, Math.max(2 * buffer.byteLength, needed)),
        )
        grown.set(buffer.subarray(0, size))
        release(buffer)
        buffer = grown
      }
      buffer.set(piece, size)
      size += piece.byteLength
      const head = scanned < SCANNED_WHILE_READING
      if (head) scanned = size
      const broke = head && scanner.feed(piece) !== null
      // Copied: the piece's memory goes now, not at the next collection (a 10 MB body arrives in
      // hundreds of them, and the collector runs only after many bodies' worth piled up).
      release(piece)
      const err = broke ? refuse() : null
      if (err) throw err
    }
    const err = scanner.feed(buffer.subarray(scanned, size)) ? refuse() : null
    if (err) throw err
  } catch (err) {
    reader.cancel().catch(() => {})
    release(buffer)
    throw err
  } finally {
    deadline.clear()
  }
  return buffer.subarray(0, size)
}

/**
 * Detaches a buffer: its memory goes now, not at the next collection (which, with many large
 * bodies arriving at once, comes only after they have all piled up). A socket piece's store is
 * Bun's; a buffer allocated here is freed to the allocator, which keeps the pages: the process's
 * RSS does not fall, but the next allocation takes them (Bun 1.4.4, measured: a 100 MB
 * `Uint8Array` filled and detached, then a second one filled, 116 MB of RSS both times, 216 MB
 * without the detach; 16 × 8 MB buffers decoded to 16 texts and detached, +25 MB, not +128).
 * Every view of the buffer is empty after it: only for a buffer nothing else reads any more (also
 * gated-read.ts `releaseReads`).
 */
export function release(bytes: Uint8Array): void {
  const buffer = bytes.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer }
  if (!buffer.detached) buffer.transfer?.(0)
}
