/**
 * @module
 * What the fake providers (`fake-anthropic.ts`, `fake-gemini.ts`) share: the handle tests get,
 * request recording, and replaying a recorded stream one event per read.
 */

/** The recordings of real provider traffic (vendored from `shared/reference/recorded/`). */
export const RECORDED = new URL('../fixtures/reference/recorded/', import.meta.url)

/** One fixture's files: a response body, a stream recording, or both. */
export interface Fixture {
  json?: URL
  /** One JSON event per line. */
  chunks?: URL
  /** HTTP status for error fixtures (their `json` is the error body). */
  status?: number
  headers?: Record<string, string>
}

export interface RecordedRequest {
  method: string
  /** Path and query, e.g. `/v1/messages`. */
  path: string
  /** Lower-case header names. */
  headers: Record<string, string>
  body: any
  /** The body as it arrived (a pass-through's bytes, decoded as UTF-8). */
  text: string
}

export interface FakeUpstream<F extends string> {
  /** Base URL to put in the provider's `base_url`. */
  url: string
  lastRequest(): RecordedRequest | undefined
  requests(): RecordedRequest[]
  /** The fixture for requests whose model is not a fixture name. */
  use(fixture: F): void
  /** Streams the client cancelled (disconnected) before their last event. */
  cancelledStreams(): number
  stop(): Promise<void>
}

export interface Replay {
  /** Pause before each event, to hold a stream open (e.g. to test cancellation). */
  delayMs: number
  onCancel: () => void
}

/** What a fake's handler gets besides the request: the recorded copy, the default fixture, the replay settings. */
export interface FakeCall<F extends string> {
  request: Request
  recorded: RecordedRequest
  url: URL
  current: F
  replay: Replay
}

/**
 * Serves `handle` on 127.0.0.1, port 0, recording every request (body parsed as JSON when it is)
 * before `handle` sees it.
 *
 * @example
 * const fake = serveFake({ fixture: 'text' }, ({ current, replay }) => serveFixture(current, replay))
 */
export function serveFake<F extends string>(
  opts: { fixture: F; eventDelayMs?: number },
  handle: (call: FakeCall<F>) => Response | Promise<Response>,
): FakeUpstream<F> {
  let current = opts.fixture
  const seen: RecordedRequest[] = []
  let cancelled = 0
  const replay: Replay = {
    delayMs: opts.eventDelayMs ?? 0,
    onCancel: () => {
      cancelled++
    },
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const text = await request.text()
      let body: any
      try {
        body = JSON.parse(text)
      } catch {
        body = text
      }
      const recorded = {
        method: request.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(request.headers),
        body,
        text,
      }
      seen.push(recorded)
      return handle({ request, recorded, url, current, replay })
    },
  })

  return {
    url: `http://127.0.0.1:${server.port}`,
    lastRequest: () => seen[seen.length - 1],
    requests: () => [...seen],
    use: (fixture) => {
      current = fixture
    },
    cancelledStreams: () => cancelled,
    stop: async () => {
      await server.stop(true)
    },
  }
}

/**
 * An SSE body that sends `frames` one per pull — so the client sees them arrive separately, as
 * over a real connection — waiting `replay.delayMs` before each, and counting a cancellation.
 */
export function replayFrames(frames: string[], replay: Replay): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  const pending = [...frames]
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (replay.delayMs) await Bun.sleep(replay.delayMs)
      const frame = pending.shift()
      if (frame === undefined) return controller.close()
      controller.enqueue(encoder.encode(frame))
    },
    cancel: replay.onCancel,
  })
}

/** The non-empty lines of a `.chunks.txt` recording. */
export async function readLines(file: URL): Promise<string[]> {
  return (await Bun.file(file).text()).split('\n').filter((line) => line.trim() !== '')
}
