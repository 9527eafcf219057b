/**
 * @module
 * What an operation plugs into the conductor (run.ts). The conductor owns every step a request
 * shares — auth, body, route, plan, the charge, admission, the attempt loop, the record — and
 * asks the operation only for what differs: its checks before admission, its routes (the model,
 * then the fallbacks that fit), and what one attempt on a route does (with the stream's rescue
 * where it has one). An operation that is never admitted (count_tokens) answers right after the
 * shared steps instead. Each operation is a file in operations/, named in one table
 * (operations/index.ts).
 *
 * @example
 * const op = operationOf(surface)
 * if (op.admitted === false) return op.answer(req)
 * const checked = op.check(req)
 * const routes = op.routes(req, checked, fallbacks)
 * // … charge, admit …
 * return callWithAttempts({ ...run, ...op.attempt(req, routes, admitted) })
 */
import type { Auth } from '../auth/authenticate.ts'
import type { CatalogueEntry } from '../catalogue/entry.ts'
import type { Reservation } from '../limits/types.ts'
import type { CallContext, ProviderAdapter } from '../providers/types.ts'
import type { RequestTrace } from '../telemetry/index.ts'
import type { Exchange } from '../traffic/traffic.ts'
import type { Answered, AttemptsRun, Targeted } from './attempts.ts'
import type { Finish } from './call-types.ts'
import type { ChargePlan } from './charge.ts'
import type { PipelineDeps } from './deps.ts'
import type { Decoded, Surface } from './surface.ts'

/** One request after the steps every keyed request shares (auth, body, decode, route, plan). */
export interface Prepared<View, S extends Surface<View> = Surface<View>> {
  deps: PipelineDeps
  surface: S
  request: Request
  /** The response headers so far: an operation adds its own (e.g. the dropped tools). */
  headers: Record<string, string>
  auth: Auth
  /** The client's body as read (a pass-through sends it on). */
  text: string
  decoded: Decoded<View>
  /** The model the client named. */
  entry: CatalogueEntry
  adapter: ProviderAdapter
  /** Our request id (the exchange's), never the client's x-request-id: usage is keyed by it. */
  requestId: string
  /** What the access log and the request metrics say about this request, filled in as it goes. */
  ex: Exchange
  /** The request's trace; null when telemetry is off or the request is not sampled. */
  trace: RequestTrace | null
  /** `performance.now()` when the request began. */
  started: number
  /** Adapter calls outside the attempt loop (the pipeline itself: its providers' timeouts). */
  calls: { callContext(entry: CatalogueEntry, signal: AbortSignal, requestId: string): CallContext }
}

/** What admission decided, for the attempts: the charge and how the outcome is recorded. */
export interface Admitted {
  /** The request's reservation; null when no token or money row applies. */
  reservation: Reservation | null
  charging: ChargePlan
  /** The output cap each choice is sent upstream with, when the limits set one (charge.ts). */
  capped: number | null
  /** Records the request's outcome; called once. */
  finish: Finish
  answered: Answered
}

/** The attempt loop's part from the operation: the routes as sent, one attempt, the rescue. */
export type Attempts<R extends Targeted> = Pick<AttemptsRun<R>, 'routes' | 'attempt' | 'rescue'>

/** An operation answered after the shared steps, never admitted nor recorded (count_tokens). */
export interface UnadmittedOperation<View, S extends Surface<View> = Surface<View>> {
  readonly admitted: false
  answer(req: Prepared<View, S>): Promise<Response>
}

/** An operation admitted against the limits and answered by the attempt loop. */
export interface AdmittedOperation<View, S extends Surface<View>, Checked, R extends Targeted> {
  readonly admitted?: true
  /** Before admission: every 400 here leaves the request uncounted (but counted toward a suspension). */
  check(req: Prepared<View, S>): Checked
  /**
   * The model's route, then one per fallback the request fits, of `fallbacks` (in order: a virtual
   * model's other members, then the configured fallbacks the plan and the key reach).
   */
  routes(req: Prepared<View, S>, checked: Checked, fallbacks: readonly CatalogueEntry[]): R[]
  /** The body the charge reads (the output cap asked, the input to bound), for `entries` (the routes'). */
  charged(req: Prepared<View, S>, entries: readonly CatalogueEntry[]): unknown
  /** After admission: the routes as sent (with the output cap), one attempt on a route, the rescue. */
  attempt(req: Prepared<View, S>, routes: R[], admitted: Admitted): Attempts<R>
}

export type PipelineOperation = UnadmittedOperation<any, any> | AdmittedOperation<any, any, any, any>
