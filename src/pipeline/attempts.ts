/**
 * @module
 * The call step as an attempt loop (DESIGN §10): one admitted request, tried on its model and
 * then on the model's `fallbacks`, each attempt a (provider, key, model) with its own call
 * context and its own abort controller linked to the client's signal. Which target comes next,
 * and after what wait, is `AttemptPlan`'s to say from the failure's kind; this file only runs
 * attempts and reports how they ended. The loop is the same for every operation: the routes and
 * what one attempt does are the operation's (operations/).
 *
 * Admission happened once before the loop; the request's outcome is recorded once after it: by
 * the answering attempt, or by `settle` of the last failure. Failed attempts are never billed.
 *
 * @example
 * return callWithAttempts({ ...run, ...op.attempt(req, routes, admitted) })
 */

import type { CatalogueEntry } from '../catalogue/entry.ts'
import type { ProviderConfig } from '../config/schema.ts'
import type { Usage } from '../operations/chat.ts'
import { factsOf, type UpstreamFacts } from '../providers/failure-facts.ts'
import {
  type Attempt,
  AttemptPlan,
  classify,
  type FailureKind,
  type Resilience,
  type Target,
} from '../providers/resilience/index.ts'
import type { CallContext, ProviderAdapter, Timeouts } from '../providers/types.ts'
import type { AttemptSpan, RequestTrace } from '../telemetry/index.ts'
import type { SessionHash } from '../util/affinity.ts'
import { GatewayError } from '../util/errors.ts'
import { Deadline, realScheduler } from '../util/scheduler.ts'
import type { CallResult, Finish, Rescue } from './call-types.ts'
import type { PipelineDeps } from './deps.ts'

/** Filled in by the loop for the record and the access line: who answered, after how many attempts. */
export interface Answered {
  entry: CatalogueEntry
  attempts: number
  /**
   * A continued stream's first part: the model that produced it and its usage (conservatively
   * counted, `Continuation.carried`), priced at that model's prices (DESIGN §10).
   */
  first?: { entry: CatalogueEntry; usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens'> }
}

/** What every operation's route has: the catalogue entry and the resilience target. */
export interface Targeted {
  entry: CatalogueEntry
  target: Target
}

/** One attempt's provider, adapter and call context, for the attempt's key. */
export interface Keyed {
  provider: ProviderConfig
  adapter: ProviderAdapter
  cancel: AbortController
  ctx: CallContext
  /** The attempt's span, when the request is traced. */
  span?: AttemptSpan
}

export type ContextFor<R extends Targeted> = (attempt: Attempt, route: R) => Keyed

/** One attempt of the operation on `route`. `rescue`: the stream rescue, when the operation has one. */
export type OperationAttempt<R extends Targeted> = (
  route: R,
  keyed: Keyed,
  hasFallback: boolean,
  rescue: Rescue | undefined,
) => Promise<CallResult>

export interface AttemptsRun<R extends Targeted> {
  deps: PipelineDeps & { resilience: Resilience }
  routes: R[]
  attempt: OperationAttempt<R>
  /** A stream's rescue after content (chat streams only). */
  rescue?: (plan: AttemptPlan, contextFor: ContextFor<R>) => Rescue | undefined
  request: Request
  /** The response headers so far; the loop adds `x-switchyard-attempts`. */
  headers: Record<string, string>
  /** Records the request's outcome; called once. */
  finish: Finish
  answered: Answered
  requestId: string
  /** The timeouts by provider prefix (a stream's or a JSON answer's). */
  timeouts: ReadonlyMap<string, Timeouts>
  /** The request's trace (null: not traced): a child span per attempt. */
  trace: RequestTrace | null
  /** The request's agent session (session.ts): its pool keys stay the session's. */
  session?: SessionHash | null
}

export async function callWithAttempts<R extends Targeted>(r: AttemptsRun<R>): Promise<Response> {
  const { deps, routes, request } = r
  const { resilience, metrics } = deps
  const plan = new AttemptPlan(routes.map(targetOf), {
    board: resilience.board,
    clock: resilience.clock,
    session: r.session,
  })
  const stop = deps.traffic.stopSignal
  // The client left or the server stopped. Each attempt's signal takes both as sources itself (one
  // `AbortSignal.any` per attempt, not two: `any` was ~3 % of the CPU in issue 24's profile);
  // a signal of the two alone is made only for a wait between attempts.
  const contextFor: ContextFor<R> = (attempt, route) => {
    const { provider, adapter } = resilience.keyed(attempt.target, attempt.key)
    const cancel = new AbortController()
    const ctx: CallContext = {
      provider,
      model: route.entry.model,
      signal: AbortSignal.any([request.signal, stop, cancel.signal]),
      requestId: r.requestId,
      timeouts: r.timeouts.get(provider.prefix)!,
      cancel: (reason) => cancel.abort(reason),
      deadline: new Deadline(realScheduler),
      onMalformed: () => metrics.malformedEvents(provider.prefix, 1),
    }
    const span = r.trace?.attempt({
      providerKind: provider.kind,
      provider: provider.prefix,
      model: route.entry.id,
      upstreamModel: route.entry.model.upstream_name ?? route.entry.model.name,
      key: attempt.key.index,
      n: attempt.n,
    })
    if (span) ctx.traceparent = span.traceparent
    return { provider, adapter, cancel, ctx, span }
  }
  const rescue = r.rescue?.(plan, contextFor)
  let last: Extract<CallResult, { ok: false }> | null = null
  for (;;) {
    const step = plan.next()
    if ('wait' in step) {
      await sleep(step.wait, AbortSignal.any([request.signal, stop]))
      if (gone(request, stop)) {
        // The request ends for the client's leaving (or the server's stopping), not for the
        // failure the wait followed: that failure was never answered.
        last = null
        break
      }
      continue
    }
    const attempt = 'stop' in step ? (gone(request, stop) ? null : plan.lastResort()) : step.attempt
    if (attempt === null) break
    const route = routeOf(routes, attempt.target)
    const keyed = contextFor(attempt, route)
    const { provider, cancel } = keyed
    r.answered.entry = route.entry
    r.answered.attempts = attempt.n
    r.headers['x-switchyard-attempts'] = String(attempt.n)
    const out = await r.attempt(route, keyed, plan.hasFallback(), rescue)
    if (out.ok) {
      if (!out.ended) {
        plan.succeeded()
        metrics.upstreamAttempt(provider.prefix, route.entry.model.name, 'ok')
        return out.response
      }
      // A stream is judged when it ends: a cut or stall after content is a failure of the target.
      const verdict = plan.streaming()
      out.ended.then((failure) => {
        // The client leaving (no failure then) or the server stopping says nothing of the target;
        // an upstream failure the client left after (writer.ts `abort`) does.
        const kind = failure && !stop.aborted ? classify(failureFacts(failure)) : null
        verdict(kind)
        metrics.upstreamAttempt(provider.prefix, route.entry.model.name, kind ?? 'ok')
        if (kind) logAttempt(deps, r.requestId, route.entry.id, attempt.key.index, kind, failure!)
      })
      return out.response
    }
    last = out
    // Whatever of this attempt is still open upstream (a body, a socket) is given up now.
    cancel.abort(out.error)
    if (gone(request, stop) || out.error.code === 'client_closed_request') {
      plan.abandoned()
      break
    }
    const facts = failureFacts(out.error)
    const kind = classify(facts)
    metrics.upstreamAttempt(provider.prefix, route.entry.model.name, kind)
    plan.failed(kind, facts.retryAfterMs ?? null)
    if (keyed.span) r.trace!.failed(keyed.span, kind, facts.status ?? 0, out.error.code)
    logAttempt(deps, r.requestId, route.entry.id, attempt.key.index, kind, out.error)
  }
  if (last === null) {
    // Every circuit of every target open: nothing was called (DESIGN §10: the target is skipped).
    // Else the client left (or the server stopped) while the loop waited.
    const open = gone(request, stop) ? null : plan.circuitsOpen()
    if (open) r.headers['x-switchyard-attempts'] = '0'
    const error = open
      ? circuitOpenError(open.model, open.until - resilience.clock.now())
      : closedOrStopped(request, deps)
    r.finish(error.status, null, error, null)
    throw error
  }
  last.settle()
  throw last.error
}

// Module functions, not closures: an arrow is a new function object each time it is evaluated.
const targetOf = (r: Targeted) => r.target

/** The client left or the server stopped. */
const gone = (request: Request, stop: AbortSignal) => request.signal.aborted || stop.aborted

function routeOf<R extends Targeted>(routes: R[], target: Targeted['target']): R {
  for (const r of routes) if (r.target === target) return r
  throw new Error('invariant: an attempt on a target of no route')
}

/** What the attempt saw: the facts the provider layer attached, else what its error code says. */
export function failureFacts(err: GatewayError): UpstreamFacts {
  const attached = factsOf(err)
  if (attached) return attached
  switch (err.code) {
    case 'upstream_timeout':
      return { transport: 'stall' }
    case 'upstream_stream_interrupted':
      return { transport: 'cut' }
    case 'upstream_unreachable':
      return { transport: 'unreachable' }
    case 'upstream_invalid_response':
    case 'upstream_error':
      return { transport: 'invalid' }
    default:
      return { status: err.status, code: err.code, message: err.message }
  }
}

function logAttempt(
  deps: PipelineDeps,
  rid: string,
  model: string,
  key: number,
  kind: FailureKind,
  err: GatewayError,
): void {
  // The gateway's own fault is a bug to fix: at error, its stack in `detail`.
  deps.log[kind === 'internal' ? 'error' : 'warn']('upstream attempt failed', {
    request_id: rid,
    model,
    key: `#${key}`,
    kind,
    status: err.status,
    code: err.code,
    detail: err.detail,
  })
}

/**
 * 503 `upstream_circuit_open`: every upstream that could answer has failed `circuit.failures` times
 * in a row and is skipped until its cooldown ends (then one request probes it). `retry-after`: the
 * whole seconds until the first circuit lets a request through, at least 1.
 */
function circuitOpenError(model: string, ms: number): GatewayError {
  const s = Math.max(1, Math.ceil(ms / 1000))
  return new GatewayError(
    503,
    'upstream_circuit_open',
    `Every upstream for ${model} failed repeatedly and is paused (its circuit is open): it was not called. Retry in ${s} s, when one request probes it again.`,
    { headers: { 'retry-after': String(s) } },
  )
}

function closedOrStopped(request: Request, deps: PipelineDeps): GatewayError {
  if (request.signal.aborted) {
    const err = new GatewayError(499, 'client_closed_request', 'The client closed the request.')
    err.name = 'AbortError'
    return err
  }
  const reason = deps.traffic.stopSignal.reason
  return reason instanceof GatewayError
    ? reason
    : new GatewayError(503, 'shutting_down', 'The server is shutting down.')
}

/** Sleeps `ms`, or less if `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}
