/**
 * @module
 * Every request as an `Exchange`, from its first byte to the last byte of its response (a stream
 * ends later than its handler). Ending an exchange is the one place where the access log line is
 * written and the request metrics are counted, whatever the surface or the outcome. The set of
 * open exchanges is also what a graceful shutdown waits for.
 *
 * @example
 * const ex = traffic.begin(request, rid)         // app onRequest
 * ex.model = 'demo/echo'                          // a route fills in what it learns
 * traffic.end(ex, 200)                            // app onAfterResponse, or a stream's finish
 */
import type { FirstPart } from '../limits/types.ts'
import { shuttingDownError } from '../util/errors.ts'
import { newRequestId } from '../util/ids.ts'
import { type Logger, PATH_SHOWN } from '../util/log.ts'
import { clip } from '../util/text.ts'
import type { Metrics } from './metrics.ts'
import { type SurfaceName, surfaceAt } from './surfaces.ts'

/** What a request is, for its access line and metrics: a model-serving surface or one of the other endpoints. */
export type Surface = SurfaceName | 'models' | 'usage' | 'admin' | 'console' | 'health' | 'metrics' | 'other'

export class Exchange {
  readonly started = performance.now()
  account: string | null = null
  /** The key's display prefix (`sk-sy-abcd`), never the key. */
  keyPrefix: string | null = null
  model: string | null = null
  stream = false
  /** The response outlives the handler (a stream): its own finish ends the exchange. */
  deferred = false
  ttftMs: number | null = null
  promptTokens: number | null = null
  completionTokens: number | null = null
  /** What the request cost (micro-dollars), set where it is settled; null when not billed. */
  costMicros: number | null = null
  errorCode: string | null = null
  /** Upstream attempts the request took (DESIGN §10); null when it made none. */
  attempts: number | null = null
  /** The model that answered, when not the one asked for (a fallback); null otherwise. */
  answeredBy: string | null = null
  /** A continued stream's first part: its tokens and cost are its own model's (metrics). */
  firstPart: FirstPart | null = null
  /** The tokens and cost are the gateway's settled estimate (no usage from the upstream). */
  estimated = false
  /** The status a route answered with, when it handed Elysia a finished response (`routes/answer.ts`). */
  status: number | null = null
  ended = false

  /**
   * `id`: the gateway's own id for the request, unique (the access log's `request_id`, what the
   * upstream call and the answer's ids are made from); `clientId`: the client's `x-request-id` when
   * it sent one (echoed, logged as `client_request_id`, never used as ours: it may repeat, and two
   * accounts sending the same one got the same completion id, DESIGN §16).
   */
  constructor(
    readonly id: string,
    readonly surface: Surface,
    readonly method: string,
    readonly path: string,
    readonly clientId: string | null = null,
  ) {}
}

/**
 * The client's own x-request-id when the response echoes it (`echoed` is it), else null: a client's
 * id is kept beside a new one of ours (`requestId`); without one, the echoed id is ours.
 */
export function clientRequestId(request: Request, echoed: string): string | null {
  return echoed === request.headers.get('x-request-id') ? echoed : null
}

/** Ours for a request whose response echoes `echoed`: a new one beside a client's own (`clientId`). */
export function requestId(echoed: string, clientId: string | null): string {
  return clientId === null ? echoed : newRequestId()
}

export interface DrainResult {
  /** Exchanges still open when the drain began. */
  inFlight: number
  /** Of those, the ones cut at the deadline (streams ended with `shutting_down`). */
  cut: number
}

/** How long exchanges cut at the deadline get to write their last event and be recorded. */
const AFTER_CUT_MS = 2_000

export class Traffic {
  private readonly open = new Set<Exchange>()
  private readonly byRequest = new WeakMap<Request, Exchange>()
  private readonly stop = new AbortController()
  private onIdle: (() => void) | null = null
  private count = 0
  /** Set once a shutdown begins: new requests are refused with 503 `shutting_down`. */
  draining = false

  constructor(
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly access: boolean,
  ) {}

  /** Aborted at the drain deadline: open streams end with `shutting_down`, pending calls are cut. */
  get stopSignal(): AbortSignal {
    return this.stop.signal
  }

  /** Requests begun since the start: the idle collector's sign of activity. */
  get begun(): number {
    return this.count
  }

  /** Requests not finished yet (streams included). */
  get inFlight(): number {
    return this.open.size
  }

  /** `echoed`: the response's x-request-id (the client's, when it sent a sane one). */
  begin(request: Request, echoed: string): Exchange {
    this.count++
    const path = pathOf(request.url)
    const clientId = clientRequestId(request, echoed)
    const id = requestId(echoed, clientId)
    // The query never reaches the line (keys and tokens travel there); a long path is clipped.
    const ex = new Exchange(id, surfaceOf(path), request.method, clip(path, PATH_SHOWN), clientId)
    this.byRequest.set(request, ex)
    this.open.add(ex)
    return ex
  }

  of(request: Request): Exchange | undefined {
    return this.byRequest.get(request)
  }

  /** The request was refused with `err`: its code goes on the access line. */
  refused(request: Request, err: { code: string }): void {
    const ex = this.byRequest.get(request)
    if (ex) ex.errorCode = err.code
  }

  /** Idempotent: the first call wins (a stream may finish before the handler's hook runs). */
  end(ex: Exchange, status: number): void {
    if (ex.ended) return
    ex.ended = true
    this.open.delete(ex)
    const latencyMs = performance.now() - ex.started
    if (ex.surface !== 'metrics') {
      this.metrics.requestFinished({
        surface: ex.surface,
        model: ex.model ?? '',
        answeredBy: ex.answeredBy,
        firstPart: ex.firstPart,
        status,
        latencyMs,
        ttftMs: ex.ttftMs,
        promptTokens: ex.promptTokens,
        completionTokens: ex.completionTokens,
        costMicros: ex.costMicros,
        estimated: ex.estimated,
      })
    }
    if (this.access) {
      const quiet = ex.surface === 'health' || ex.surface === 'metrics'
      ;(quiet ? this.log.debug : this.log.info)('access', {
        request_id: ex.id,
        // An absent field as `undefined`, which the line's JSON leaves out: not an object spread in.
        client_request_id: ex.clientId ?? undefined,
        surface: ex.surface,
        method: ex.method,
        path: ex.path,
        status,
        account: ex.account,
        key_prefix: ex.keyPrefix,
        model: ex.model,
        stream: ex.stream,
        latency_ms: Math.round(latencyMs),
        ttft_ms: ex.ttftMs === null ? null : Math.round(ex.ttftMs),
        prompt_tokens: ex.promptTokens,
        completion_tokens: ex.completionTokens,
        error_code: ex.errorCode,
        attempts: ex.attempts ?? undefined,
        answered_by: ex.answeredBy ?? undefined,
      })
    }
    if (this.open.size === 0) this.onIdle?.()
  }

  /**
   * Refuses new requests, waits up to `timeoutMs` for the ones in flight, then cuts what is left
   * (streams end with an error event `shutting_down`) and waits briefly for them to be recorded.
   */
  async drain(timeoutMs: number): Promise<DrainResult> {
    this.draining = true
    const inFlight = this.open.size
    const idle = (ms: number) =>
      new Promise<boolean>((resolve) => {
        if (this.open.size === 0) return resolve(true)
        const timer = setTimeout(() => resolve(false), ms)
        this.onIdle = () => {
          clearTimeout(timer)
          resolve(true)
        }
      })
    if (await idle(timeoutMs)) return { inFlight, cut: 0 }
    const cut = this.open.size
    // The reason is what a cut call reports: providers' abortError passes a GatewayError through.
    this.stop.abort(shuttingDownError())
    await idle(AFTER_CUT_MS)
    this.onIdle = null
    return { inFlight, cut }
  }
}

/** The path without the query, found without building a URL object (this runs per request). */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return '/'
  const q = url.indexOf('?', start)
  return q === -1 ? url.slice(start) : url.slice(start, q)
}

export function surfaceOf(path: string): Surface {
  const serving = surfaceAt(path)
  if (serving) return serving
  if (path.startsWith('/v1/models') || path.startsWith('/v1beta/models')) return 'models'
  if (path === '/v1/usage') return 'usage'
  if (path.startsWith('/admin/')) return 'admin'
  if (path.startsWith('/console')) return 'console'
  if (path === '/healthz') return 'health'
  if (path === '/metrics') return 'metrics'
  return 'other'
}
