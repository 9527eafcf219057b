/**
 * @module
 * A fault-injecting upstream: a real `Bun.serve` HTTP server on 127.0.0.1, port 0, speaking
 * OpenAI chat (`/v1/chat/completions`), Anthropic Messages (`/v1/messages`) and OpenAI Responses
 * (`/v1/responses`), JSON and SSE, whose every answer is scripted. Faults happen for real: a reset
 * closes the socket before any byte (Bun sends no status line until the first body byte, and an
 * errored body aborts the connection), a cut aborts it mid-body, a stall or a silent upstream
 * holds the connection open until the client gives up (the server's idle timeout is off).
 *
 * Scripts: `script(match, ...steps)` — requests matching `{model?, key?}` take the steps in order,
 * the last one repeating (`'server_error', 'ok'` = 500 once; `'unavailable'` = 503 for good).
 * The most specific script wins (model and key, then key, then model); otherwise `ok`.
 *
 * Every attempt is recorded (wire, model, key from `authorization` / `x-api-key`, the step, when
 * it began and when and how it ended, the assistant prefill it carried, its body and headers) so tests can count
 * attempts, measure the gaps between them, and see that the gateway cancelled a stream it gave up.
 *
 * A request ending with an assistant message that begins the scripted answer is answered with the
 * rest of it, as a model continuing its own text (assistant prefill).
 *
 * @example
 * const up = await startFaultUpstream()
 * up.script({ model: 'gpt-a' }, { fault: 'rate_limited', retryAfter: '1' }, 'ok')
 * up.script({ key: 'sk-dead' }, 'unauthorized')
 * // provider: { kind: 'openai', base_url: `${up.url}/v1`, ... }
 * expect(up.attempts({ model: 'gpt-a' })).toHaveLength(2)
 */
import { errorResponse, type Fault, type FaultName, refuse, type Step, statusFault } from './fault-errors.ts'
import {
  type Answer,
  answerPieces,
  remainingPieces,
  type StreamFrames,
  trailingAssistantText,
  WIRE_PATHS,
  type Wire,
  type WireBodies,
  wireBodies,
} from './fault-wires.ts'

export type { Fault, FaultName, Step } from './fault-errors.ts'
export { answerPieces, type Wire } from './fault-wires.ts'

export interface Match {
  model?: string
  key?: string
}

export interface Attempt {
  /** 1-based, in arrival order. */
  n: number
  wire: Wire
  model: string
  /** The credential the request carried (bearer token or `x-api-key`); '' when none. */
  key: string
  stream: boolean
  fault: FaultName
  /** Milliseconds since the server started. */
  at: number
  /** When the server finished the answer or the client went away; null while it runs. */
  endedAt: number | null
  /** `client`: the client closed the connection or cancelled the body before the answer ended. */
  endedBy: 'server' | 'client' | null
  /** Words (and tool-call frames) the server sent. */
  sent: number
  /** The assistant text the request ended with, when it did. */
  prefill: string | null
  body: any
  /** The request's headers, names in lower case. */
  headers: Record<string, string>
}

export interface FaultUpstream {
  /** `http://127.0.0.1:<port>` (append `/v1` for an openai `base_url`). */
  url: string
  port: number
  script(match: Match, ...steps: Step[]): void
  /** Forget scripts and attempts. */
  clear(): void
  attempts(filter?: Match): Attempt[]
  /** The full answer text the server sends for `words` words. */
  answer(words?: number): string
  /** Resolves once `n` attempts match `filter` (polls; rejects after `timeoutMs`). */
  waitForAttempts(n: number, filter?: Match, timeoutMs?: number): Promise<Attempt[]>
  stop(): Promise<void>
}

const enc = new TextEncoder()
/**
 * How long a cut waits for the words before it to be written out. Bun writes them in a task of its
 * own, which a starved process (3 test files on 2 cores, load 20) ran after a 20 ms timer: the
 * abort took every frame with it, 1 run in 150 of a bare loop, and the gateway retried a cut "after
 * content" as a reset before it (resilience-stream, 3–4 runs in 8 at load 15–29). At 100 ms: none.
 */
const FLUSH_MS = 100

interface Rule {
  steps: Fault[]
  next: number
}

const toFault = (s: Step): Fault => (typeof s === 'string' ? { fault: s } : s)

export async function startFaultUpstream(
  opts: { words?: number; gapMs?: number } = {},
): Promise<FaultUpstream> {
  const words = opts.words ?? 12
  const gapMs = opts.gapMs ?? 0
  const t0 = performance.now()
  const now = () => performance.now() - t0
  let rules = new Map<string, Rule>()
  let seen: Attempt[] = []
  /** Pending waits (silent, stall), released when the server stops. */
  const holds = new Set<() => void>()

  const hold = (ms: number | undefined, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        holds.delete(done)
        clearTimeout(timer)
        resolve()
      }
      const timer = ms === undefined ? undefined : setTimeout(done, ms)
      holds.add(done)
      signal.addEventListener('abort', done, { once: true })
    })

  const ruleKey = (m: Match) => `${m.model ?? '*'}\u0000${m.key ?? '*'}`
  const pick = (model: string, key: string): Fault => {
    for (const k of [ruleKey({ model, key }), ruleKey({ key }), ruleKey({ model })]) {
      const r = rules.get(k)
      if (!r) continue
      const f = r.steps[Math.min(r.next, r.steps.length - 1)]!
      r.next++
      return f
    }
    return { fault: 'ok' }
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const wire = WIRE_PATHS[url.pathname]
      if (request.method !== 'POST' || !wire) return new Response('not found', { status: 404 })
      const w = await wireBodies(wire)
      const key =
        request.headers.get('x-api-key') ??
        request.headers.get('authorization')?.replace(/^Bearer\s+/i, '') ??
        ''
      let body: any
      try {
        body = await request.json()
      } catch {
        return errorResponse(
          w,
          wire,
          400,
          'invalid_request_error',
          'We could not parse the JSON body of your request.',
        )
      }
      const refusal = refuse(wire, request, body, key)
      if (refusal) return errorResponse(w, wire, refusal[0], refusal[1], refusal[2])
      const model = String(body.model)
      const fault = pick(model, key)
      const attempt: Attempt = {
        n: seen.length + 1,
        wire,
        model,
        key,
        stream: body.stream === true,
        fault: fault.fault,
        at: now(),
        endedAt: null,
        endedBy: null,
        sent: 0,
        prefill: trailingAssistantText(wire, body),
        body,
        headers: Object.fromEntries(request.headers),
      }
      seen.push(attempt)
      const end = (by: 'server' | 'client') => {
        if (attempt.endedAt !== null) return
        attempt.endedAt = now()
        attempt.endedBy = by
      }
      request.signal.addEventListener('abort', () => end('client'), { once: true })
      const answer: Answer = {
        model,
        pieces: remainingPieces(answerPieces(fault.words ?? words), attempt.prefill ?? ''),
        includeUsage: body.stream_options?.include_usage === true,
        toolCall: fault.toolCall,
        stop: wire === 'messages' && fault.fault === 'content_policy' ? 'refusal' : undefined,
      }
      const status = statusFault(w, wire, fault, model)
      if (status) {
        end('server')
        return status
      }
      switch (fault.fault) {
        case 'reset':
          return abortNow(() => end('server'))
        case 'silent':
          await hold(undefined, request.signal)
          end('client')
          return new Response(null, { status: 504 })
        case 'slow_first_token':
          if (!attempt.stream) await hold(fault.delayMs ?? 20_000, request.signal)
      }
      if (fault.fault === 'quota_in_stream' && !(attempt.stream && w.quota))
        return new Response(`quota_in_stream: not a ${wire} stream fault`, { status: 500 })
      const plan = attempt.stream
        ? streamPlan(w.stream(answer), w, fault, answer)
        : jsonPlan(w.json(answer), fault)
      return play(plan, attempt, request.signal, end, attempt.stream)
    },
  })

  /** One step of a body: a frame (`word` counts it), a pause, or the end (clean or aborted). */
  type Act = { frame: string; word?: true } | { wait: number | undefined } | { end: 'close' | 'abort' }

  function streamPlan(s: StreamFrames, w: WireBodies, f: Fault, a: Answer): Act[] {
    const words = (from: number, to?: number) =>
      s.pieces.slice(from, to).map((frame) => ({ frame, word: true as const }))
    const frames = (list: string[]) => list.map((frame) => ({ frame }))
    const after = Math.min(f.after ?? Math.floor(s.pieces.length / 2), s.pieces.length)
    const whole = [...frames(s.head), ...words(0), ...frames(s.tail)]
    switch (f.fault) {
      case 'slow_first_token':
        return [
          ...frames(s.head),
          { wait: f.delayMs ?? 20_000 },
          ...words(0),
          ...frames(s.tail),
          { end: 'close' },
        ]
      case 'cut':
        return [...frames(s.head), ...words(0, after), { end: 'abort' }]
      case 'end_early':
        return [...frames(s.head), ...words(0, after), { end: 'close' }]
      case 'stall':
        return [
          ...frames(s.head),
          ...words(0, after),
          { wait: f.delayMs },
          ...words(after),
          ...frames(s.tail),
          { end: 'close' },
        ]
      case 'malformed':
        return [
          ...frames(s.head),
          ...words(0, after),
          { frame: f.frame ?? w.malformed },
          ...words(after),
          ...frames(s.tail),
          { end: 'close' },
        ]
      case 'no_done':
        return [...whole.filter((act) => act.frame !== w.done), { end: 'close' }]
      case 'quota_in_stream': {
        const sent = Math.min(f.after ?? 0, s.pieces.length)
        const failure = w.quota!(a, s.head.length + sent)
        return [...frames(s.head), ...words(0, sent), ...frames(failure), { end: 'close' }]
      }
      default:
        return [...whole, { end: 'close' }]
    }
  }

  function jsonPlan(json: string, f: Fault): Act[] {
    const half = json.slice(0, json.length >> 1)
    switch (f.fault) {
      case 'cut':
        return [{ frame: half }, { end: 'abort' }]
      case 'end_early':
      case 'malformed':
        return [{ frame: half }, { end: 'close' }]
      case 'stall':
        return [{ frame: half }, { wait: f.delayMs }, { frame: json.slice(half.length) }, { end: 'close' }]
      default:
        return [{ frame: json }, { end: 'close' }]
    }
  }

  /** The body, one act per pull, so the client reads the frames as they come. */
  function play(
    plan: Act[],
    attempt: Attempt,
    signal: AbortSignal,
    end: (by: 'server' | 'client') => void,
    stream: boolean,
  ): Response {
    let i = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (;;) {
          const act = plan[i++]
          if (!act) return
          if ('wait' in act) {
            await hold(act.wait, signal)
            if (signal.aborted) return
            continue
          }
          if ('end' in act) {
            if (act.end === 'close') {
              end('server')
              return controller.close()
            }
            // Bun writes what was enqueued only after the pull settles: let it reach the socket
            // first, or the abort would take the words with it (a reset before headers).
            await Bun.sleep(FLUSH_MS)
            end('server')
            // No argument: Bun aborts the connection without logging a reason.
            return controller.error()
          }
          if (gapMs && i > 1) await Bun.sleep(gapMs)
          controller.enqueue(enc.encode(act.frame))
          if (act.word) attempt.sent++
          return
        }
      },
      cancel: () => end('client'),
    })
    return new Response(body, {
      headers: { 'content-type': stream ? 'text/event-stream; charset=utf-8' : 'application/json' },
    })
  }

  const attempts = (filter: Match = {}) =>
    seen.filter(
      (a) =>
        (filter.model === undefined || a.model === filter.model) &&
        (filter.key === undefined || a.key === filter.key),
    )

  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port as number,
    script(match, ...steps) {
      if (steps.length === 0) throw new Error('script: give at least one step')
      rules.set(ruleKey(match), { steps: steps.map(toFault), next: 0 })
    },
    clear() {
      rules = new Map()
      seen = []
    },
    attempts,
    answer: (n = words) => answerPieces(n).join(''),
    async waitForAttempts(n, filter = {}, timeoutMs = 10_000) {
      const deadline = performance.now() + timeoutMs
      for (;;) {
        const got = attempts(filter)
        if (got.length >= n) return got
        if (performance.now() > deadline)
          throw new Error(`waited ${timeoutMs} ms for ${n} attempts, saw ${got.length}`)
        await Bun.sleep(5)
      }
    },
    async stop() {
      for (const release of [...holds]) release()
      await server.stop(true)
    },
  }
}

/** A body that errors before its first byte: Bun closes the socket without a status line. */
function abortNow(onEnd: () => void): Response {
  return new Response(
    new ReadableStream({
      start(controller) {
        onEnd()
        controller.error()
      },
    }),
  )
}
