/**
 * @module
 * A local OpenAI-wire upstream for tests and the benchmark: `POST /v1/chat/completions` (JSON and
 * SSE framed exactly as OpenAI sends them, tool-call deltas included), `POST /v1/responses` (a text
 * answer, JSON or Responses events), `POST /v1/embeddings` (fixed vectors, float or base64, 1536
 * values unless `dimensions` says) and `GET /v1/models`.
 * The requested model name scripts faults: `fault-500`, `fault-429`, `fault-400`,
 * `fault-invalid-json`, `fault-cut-stream`, `fault-error-event`, `slow-headers-<N>ms`,
 * `slow-first-<N>ms`, `slow-stream[-<N>ms]`, `hang`; a name containing `text-only` answers in text
 * even when offered tools (an agent such as Codex always offers tools). Reasoning-model names (`gpt-5`,
 * `o3` ...) refuse `max_tokens` as OpenAI's do (`mock-upstream/parameters.ts`). Response bytes are built once per shape and
 * reused, because the benchmark measures the gateway against this baseline.
 *
 * @example
 * const mock = await startMockUpstream({ chunks: 3 })
 * // provider base_url: mock.url  (ends in /v1)
 * await mock.stop()
 *
 * CLI: `bun scripts/mock-upstream.ts --port 9000 --latency 50 --chunks 20 --chunk-delay 0`
 */
import { buildEmbeddingsJson } from './mock-upstream/embeddings-wire.ts'
import { refusedParameter } from './mock-upstream/parameters.ts'
import { buildResponseJson, buildResponsesFrames } from './mock-upstream/responses-wire.ts'
import {
  buildCompletion,
  buildStreamFrames,
  errorBody,
  MODELS_BODY,
  type Shape,
} from './mock-upstream/wire.ts'

export interface MockUpstreamOptions {
  port?: number
  /** Delay before the response headers of every chat request. */
  latencyMs?: number
  /** Content deltas per streamed answer (also the words of a non-streamed one). */
  chunks?: number
  /** Delay between streamed events. */
  chunkDelayMs?: number
}

export interface MockStats {
  requests: number
  streams: number
  /** Requests whose client went away before the response was complete. */
  aborted: number
  lastBody: unknown
  lastHeaders: Record<string, string>
}

export interface MockUpstream {
  /** Base URL ending in `/v1`. */
  url: string
  port: number
  stats: MockStats
  reset(): void
  stop(): Promise<void>
}

const JSON_HEADERS = { 'content-type': 'application/json' }
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' }
const SLOW_STREAM_MS = 1000
/** Cache entries are keyed by request shape; cap them so odd model names cannot grow memory. */
const CACHE_LIMIT = 512

const enc = new TextEncoder()
/** What `slow-first-*` sends at once: an SSE comment, or JSON's insignificant leading whitespace. */
const SSE_PRELUDE = enc.encode(': processing\n\n')
const JSON_PRELUDE = enc.encode(' ')
const sleep = (ms: number): Promise<void> => (ms > 0 ? Bun.sleep(ms) : Promise.resolve())

function freshStats(): MockStats {
  return { requests: 0, streams: 0, aborted: 0, lastBody: undefined, lastHeaders: {} }
}

/** Starts the mock on 127.0.0.1 (port 0 = any free port). */
export async function startMockUpstream(opts: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const latencyMs = opts.latencyMs ?? 0
  const chunks = Math.max(1, opts.chunks ?? 5)
  const chunkDelayMs = opts.chunkDelayMs ?? 0
  const stats = freshStats()
  const created = Math.floor(Date.now() / 1000)
  const completions = new Map<string, Uint8Array>()
  const streams = new Map<string, Uint8Array[]>()
  /**
   * A whole streamed answer's bytes (its frames concatenated), built once too: made afresh per
   * request it cost the mock ~65–110 µs more an answer than a cached one (c=1, 2026-11-30), which
   * the lane's governed JSON row paid (the gateway asks the upstream for a stream there) and its
   * direct JSON row did not.
   */
  const streamBodies = new Map<string, Uint8Array>()

  function cached<T>(cache: Map<string, T>, key: string, build: () => T): T {
    let v = cache.get(key)
    if (v === undefined) {
      v = build()
      if (cache.size < CACHE_LIMIT) cache.set(key, v)
    }
    return v
  }

  /** Counts the request and reads its JSON body; a 400 response when it is not an object. */
  async function readBody(req: Request): Promise<Record<string, unknown> | Response> {
    stats.requests++
    const body = (await req.json().catch(() => null)) as Record<string, unknown> | null
    if (!body || typeof body !== 'object') {
      return json(
        400,
        errorBody('We could not parse the JSON body of your request.', 'invalid_request_error'),
      )
    }
    stats.lastBody = body
    stats.lastHeaders = req.headers.toJSON()
    req.signal.addEventListener('abort', () => stats.aborted++, { once: true })
    return body
  }

  async function chat(req: Request): Promise<Response> {
    const body = await readBody(req)
    if (body instanceof Response) return body
    const stream = body.stream === true
    if (stream) stats.streams++
    const model = typeof body.model === 'string' ? body.model : 'gpt-4o-mini'
    const refused = refusedParameter(model, body)
    if (refused) return json(400, refused)
    const shape: Shape = {
      model,
      created,
      words: chunks,
      usage: (body.stream_options as { include_usage?: boolean } | null)?.include_usage === true,
      tools: toolNames(body),
    }
    const key = `${model}\0${shape.usage}\0${shape.tools.join(',')}`
    const frames = (): Uint8Array[] => cached(streams, key, () => buildStreamFrames(shape))
    const completion = (): Uint8Array => cached(completions, key, () => enc.encode(buildCompletion(shape)))

    const fault = faultResponse(model, req, stream, frames)
    if (fault) return fault
    const slowHeaders = /^slow-headers-(\d+)ms$/.exec(model)
    await sleep(slowHeaders ? Number(slowHeaders[1]) : latencyMs)
    const slowFirst = /^slow-first-(\d+)ms$/.exec(model)
    const firstDelay = slowFirst ? Number(slowFirst[1]) : 0
    if (!stream) {
      if (firstDelay === 0) return new Response(completion(), { headers: JSON_HEADERS })
      return new Response(paced([completion()], firstDelay, 0, JSON_PRELUDE), { headers: JSON_HEADERS })
    }
    const slowStream = /^slow-stream(?:-(\d+)ms)?$/.exec(model)
    const gap = slowStream ? Number(slowStream[1] ?? SLOW_STREAM_MS) : chunkDelayMs
    if (firstDelay === 0 && gap === 0)
      return new Response(
        cached(streamBodies, key, () => concat(frames())),
        { headers: SSE_HEADERS },
      )
    return new Response(paced(frames(), firstDelay, gap, firstDelay > 0 ? SSE_PRELUDE : undefined), {
      headers: SSE_HEADERS,
    })
  }

  /** The scripted failures; `null` for a model name that is not one. */
  function faultResponse(
    model: string,
    req: Request,
    stream: boolean,
    frames: () => Uint8Array[],
  ): Response | Promise<Response> | null {
    switch (model) {
      case 'fault-500':
        return json(
          500,
          errorBody(
            'The server had an error while processing your request. Sorry about that!',
            'server_error',
          ),
        )
      case 'fault-429':
        return json(
          429,
          errorBody(
            'Rate limit reached for requests per min (RPM): Limit 3, Used 3.',
            'requests',
            'rate_limit_exceeded',
          ),
          { 'retry-after': '7', 'x-ratelimit-remaining-requests': '0' },
        )
      case 'fault-400': {
        // Echoes the caller's key, as careless upstreams do, so tests can prove it is redacted.
        const key = (req.headers.get('authorization') ?? '').replace(/^Bearer\s+/i, '')
        const message = `Invalid value for 'messages': rejected by the mock for key ${key}.`
        return json(400, errorBody(message, 'invalid_request_error', 'invalid_value', 'messages'))
      }
      case 'fault-invalid-json':
        return stream
          ? new Response('data: {"id": "chatcmpl-mock", oops\n\n', { headers: SSE_HEADERS })
          : new Response('<html>this is not json', { headers: JSON_HEADERS })
      case 'fault-cut-stream':
        return new Response(
          cut(stream ? frames().slice(0, 2) : [enc.encode('{"id":"chatcmpl-mock","choi')]),
          {
            headers: stream ? SSE_HEADERS : JSON_HEADERS,
          },
        )
      case 'fault-error-event': {
        const error = errorBody(
          'The server had an error while processing your request. Sorry about that!',
          'server_error',
        )
        if (!stream) return json(200, error)
        return new Response(concat([...frames().slice(0, 2), enc.encode(`data: ${error}\n\n`)]), {
          headers: SSE_HEADERS,
        })
      }
      case 'hang':
        return new Promise<Response>((resolve) => {
          req.signal.addEventListener('abort', () => resolve(new Response(null, { status: 499 })), {
            once: true,
          })
        })
      default:
        return null
    }
  }

  /** The Responses API: a text answer of `chunks` words; no faults are scripted here. */
  async function responses(req: Request): Promise<Response> {
    const body = await readBody(req)
    if (body instanceof Response) return body
    const stream = body.stream === true
    if (stream) stats.streams++
    const model = typeof body.model === 'string' ? body.model : 'gpt-4o-mini'
    const shape: Shape = { model, created, words: chunks, usage: true, tools: [] }
    await sleep(latencyMs)
    const key = `responses\0${model}`
    if (!stream)
      return new Response(
        cached(completions, key, () => enc.encode(buildResponseJson(shape))),
        { headers: JSON_HEADERS },
      )
    return new Response(
      cached(streamBodies, key, () => concat(buildResponsesFrames(shape))),
      { headers: SSE_HEADERS },
    )
  }

  /** Embeddings: one fixed vector per input item; no faults are scripted here. */
  async function embeddings(req: Request): Promise<Response> {
    const body = await readBody(req)
    if (body instanceof Response) return body
    const model = typeof body.model === 'string' ? body.model : 'text-embedding-3-small'
    const input = body.input
    const count = Array.isArray(input) && typeof input[0] !== 'number' ? input.length : 1
    const dims = typeof body.dimensions === 'number' ? body.dimensions : 1536
    const base64 = body.encoding_format === 'base64'
    await sleep(latencyMs)
    const key = `embeddings\0${model}\0${count}\0${dims}\0${base64}`
    return new Response(
      cached(completions, key, () => enc.encode(buildEmbeddingsJson(model, count, dims, base64))),
      { headers: JSON_HEADERS },
    )
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: opts.port ?? 0,
    // `hang` and slow streams must outlive Bun's default 10 s socket idle timeout.
    idleTimeout: 0,
    routes: {
      '/v1/chat/completions': { POST: chat },
      '/v1/responses': { POST: responses },
      '/v1/embeddings': { POST: embeddings },
      '/v1/models': { GET: () => new Response(MODELS_BODY, { headers: JSON_HEADERS }) },
    },
    fetch: () =>
      json(
        404,
        errorBody(
          'Unknown path: the mock serves /v1/chat/completions and /v1/models.',
          'invalid_request_error',
        ),
      ),
  })

  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    port: server.port as number,
    stats,
    reset: () => void Object.assign(stats, freshStats()),
    stop: () => server.stop(true),
  }
}

function json(status: number, body: string, headers?: Record<string, string>): Response {
  return new Response(body, { status, headers: headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS })
}

/** Calls two of the offered tools, unless the conversation ends in tool results: then it answers. */
function toolNames(body: Record<string, unknown>): string[] {
  const tools = body.tools
  if (!Array.isArray(tools) || tools.length === 0 || body.tool_choice === 'none') return []
  if (String(body.model).includes('text-only')) return []
  const messages = body.messages
  if (Array.isArray(messages) && (messages.at(-1) as { role?: unknown } | undefined)?.role === 'tool')
    return []
  const names = tools.map((t) => String((t as { function?: { name?: unknown } })?.function?.name ?? 'tool'))
  return [names[0]!, names[1 % names.length]!]
}

function concat(parts: Uint8Array[]): Uint8Array {
  let size = 0
  for (const p of parts) size += p.byteLength
  const out = new Uint8Array(size)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.byteLength
  }
  return out
}

/**
 * Frames one at a time: `first` ms before the first, `gap` ms before each later one. Bun sends the
 * response headers only with the first body bytes, so a `prelude` (bytes that carry no content)
 * lets the headers out before the first delay.
 */
function paced(
  frames: Uint8Array[],
  first: number,
  gap: number,
  prelude?: Uint8Array,
): ReadableStream<Uint8Array> {
  let i = 0
  let cancelled = false
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        if (prelude) c.enqueue(prelude)
      },
      async pull(c) {
        await sleep(i === 0 ? first : gap)
        if (cancelled) return
        if (i < frames.length) c.enqueue(frames[i++]!)
        else c.close()
      },
      cancel() {
        cancelled = true
      },
    },
    { highWaterMark: 0 },
  )
}

/**
 * Sends `frames`, then breaks the connection (an errored body makes Bun reset the socket). A reset
 * discards what the receiver has not read yet, so the last frame is given 250 ms to be read first:
 * 10 ms was met on a quiet machine only (under CI's load the client now and then lost the frames to
 * the reset and saw a cut before the first byte).
 */
function cut(frames: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      if (i < frames.length) {
        c.enqueue(frames[i++]!)
        await sleep(i === frames.length ? 250 : 10)
      } else c.error() // no reason: Bun then resets quietly instead of logging a stack
    },
  })
}

function flag(args: string[], name: string): number | undefined {
  const i = args.indexOf(name)
  if (i === -1) return undefined
  const v = Number(args[i + 1])
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} needs a non-negative number`)
  return v
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const mock = await startMockUpstream({
    port: flag(args, '--port'),
    latencyMs: flag(args, '--latency'),
    chunks: flag(args, '--chunks'),
    chunkDelayMs: flag(args, '--chunk-delay'),
  })
  console.log(mock.url)
  const stop = (): void => void mock.stop().then(() => process.exit(0))
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}
