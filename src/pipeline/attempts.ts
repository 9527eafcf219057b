/**
 * @module
 * The call step as an attempt loop (DESIGN §10): one admitted request, tried on its model and
 * then on the model's `fallbacks`, each attempt a (provider, key, model) with its own call
 * context, its own abort controller linked to the client's signal, and its own route — passed
 * through when the attempt's provider speaks the surface's wire, else translated. Which target
 * comes next, and after what wait, is `AttemptPlan`'s to say from the failure's kind; this file
 * only runs attempts and reports how they ended. The loop is the same for every operation: what
 * one attempt does is the operation's (`chatOperation` here, `embeddingsAttempt` beside the
 * embeddings call).
 *
 * Admission happened once before the loop; the request's outcome is recorded once after it: by
 * the answering attempt, or by `settle` of the last failure. Failed attempts are never billed.
 *
 * @example
 * const routes = routesFor(surface, decoded.view, primary, resilience, catalogue, allowed)
 * return callWithAttempts({ ...run, routes })
 */
import type { CatalogueEntry } from '../catalogue/routing.ts'
import type { ProviderConfig } from '../config/schema.ts'
import type { ProviderKind } from '../config/schema-providers.ts'
import { outputTokenCount, prepareOutputCount } from '../limits/output-count.ts'
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
import { GatewayError } from '../util/errors.ts'
import { Deadline, realScheduler } from '../util/scheduler.ts'
import { asGatewayError, type CallResult, callProvider, type Finish, type Rescue } from './call.ts'
import { checkAndTranslate } from './check.ts'
import { Continuation } from './continuation.ts'
import type { PipelineDeps } from './deps.ts'
import { type ContinuationCharge, capRequest, continuationAllowance } from './output-cap.ts'
import { ChunkGate } from './output-cut.ts'
import type { CutGate } from './stream-writer.ts'
import type { ChatSurface, Decoded, EncodeContext, Forwarding, Translated } from './surface.ts'

/** One target of the request and how the request reaches it. */
export interface Route<View> {
  entry: CatalogueEntry
  target: Target
  /** Pass-through to a provider of the surface's wire; absent = translated. */
  forward: Forwarding<View> | undefined
  translated: Translated | null
}

/** The surface's pass-through for `entry`'s provider, when it speaks the surface's wire. */
export function forwardFor<View>(
  surface: ChatSurface<View>,
  entry: CatalogueEntry,
): Forwarding<View> | undefined {
  const fwd = surface.forward
  return fwd?.kind === entry.provider.kind && (fwd.accepts?.(entry.provider) ?? true) ? fwd : undefined
}

/**
 * The primary's route, then one per fallback the request fits: allowed by the plan, configured,
 * and passing the feature check and the surface's limits for that model (a fallback that would
 * refuse the request is left out, silently: the primary's answer stands for it).
 */
export function routesFor<View>(
  surface: ChatSurface<View>,
  view: View,
  primary: Omit<Route<View>, 'target'>,
  resilience: Resilience,
  resolve: (id: string) => CatalogueEntry,
  allowed: (entry: CatalogueEntry) => boolean,
): Route<View>[] {
  const { entry } = primary
  const routes: Route<View>[] = [
    { ...primary, target: resilience.target(entry.provider, entry.model, entry.id) },
  ]
  for (const id of entry.model.fallbacks ?? []) {
    try {
      const fb = resolve(id)
      if (!allowed(fb)) continue
      const forward = forwardFor(surface, fb)
      const translated = checkAndTranslate(surface, view, fb, forward !== undefined)
      routes.push({
        entry: fb,
        target: resilience.target(fb.provider, fb.model, fb.id),
        forward,
        translated,
      })
    } catch {}
  }
  return routes
}

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
  timeouts: (prefix: string) => Timeouts
  /** The request's trace (null: not traced): a child span per attempt. */
  trace: RequestTrace | null
}

/** A chat request as the attempt loop needs it. */
export interface ChatCall<View> {
  deps: PipelineDeps
  surface: ChatSurface<View>
  routes: Route<View>[]
  decoded: Decoded<View>
  /** The client's body (pass-through sends it on) and headers (some are forwarded). */
  bodyText: string
  request: Request
  headers: Record<string, string>
  finish: Finish
  answered: Answered
  /** The request's reservation and output caps, when it has any (pipeline/charge.ts). */
  charge?: ContinuationCharge
}

/**
 * The cut at the output allowance for an attempt of `kind`, when a token or money limit applies:
 * the chunk gate on a translated route, the surface's own over the raw events on a pass-through.
 */
function gateFor<View>(
  charge: ContinuationCharge | undefined,
  kind: ProviderKind,
  forward: Forwarding<View> | undefined,
): ChunkGate | CutGate<Uint8Array> | undefined {
  const allowance = charge?.allowance
  const r = charge?.reservation
  if (!allowance || !r) return undefined
  allowance.kind = kind
  if (forward) return forward.cut(allowance, r.tokens - r.outputTokens)
  return new ChunkGate(allowance, r.tokens - r.outputTokens)
}

/** The chat operation's attempt (`callProvider`: pass-through or translated, JSON or stream) and rescue. */
export function chatOperation<View>(c: ChatCall<View>): Pick<AttemptsRun<Route<View>>, 'attempt' | 'rescue'> {
  return {
    attempt: (route, { provider, adapter, ctx }, hasFallback, rescue) => {
      const encodeCtx: EncodeContext<View> = {
        modelId: route.entry.id,
        upstreamModel: route.entry.model.upstream_name ?? route.entry.model.name,
        provider,
        requestId: ctx.requestId,
        view: c.decoded.view,
        includeUsage: route.translated?.includeUsage ?? false,
      }
      return callProvider({
        deps: c.deps,
        surface: c.surface,
        adapter,
        ctx,
        encodeCtx,
        stream: c.decoded.stream,
        call: route.forward
          ? {
              forward: route.forward.request(c.decoded.view, route.entry, c.bodyText, c.request.headers),
              relay: route.forward,
            }
          : { request: route.translated!.request },
        headers: c.headers,
        hasFallback,
        rescue,
        finish: c.finish,
        signal: c.request.signal,
        gate: gateFor(c.charge, route.entry.provider.kind, route.forward),
      })
    },
    rescue: c.decoded.stream ? (plan, contextFor) => rescueFor(c, plan, contextFor) : undefined,
  }
}

export async function callWithAttempts<R extends Targeted>(r: AttemptsRun<R>): Promise<Response> {
  const { deps, routes, request } = r
  const { resilience, metrics } = deps
  const plan = new AttemptPlan(
    routes.map((x) => x.target),
    { board: resilience.board, clock: resilience.clock },
  )
  const stop = deps.traffic.stopSignal
  // The client left or the server stopped. Each attempt's signal takes both as sources itself (one
  // `AbortSignal.any` per attempt, not two: `any` was ~3 % of the CPU in issue 24's profile);
  // a signal of the two alone is made only for a wait between attempts.
  const gone = () => request.signal.aborted || stop.aborted
  const contextFor: ContextFor<R> = (attempt, route) => {
    const { provider, adapter } = resilience.keyed(attempt.target, attempt.key)
    const cancel = new AbortController()
    const ctx: CallContext = {
      provider,
      model: route.entry.model,
      signal: AbortSignal.any([request.signal, stop, cancel.signal]),
      requestId: r.requestId,
      timeouts: r.timeouts(provider.prefix),
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
      if (gone()) {
        // The request ends for the client's leaving (or the server's stopping), not for the
        // failure the wait followed: that failure was never answered.
        last = null
        break
      }
      continue
    }
    const attempt = 'stop' in step ? (gone() ? null : plan.lastResort()) : step.attempt
    if (attempt === null) break
    const route = routes.find((x) => x.target === attempt.target)!
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
        // The client leaving or the server stopping says nothing of the target.
        const kind = failure && !gone() ? classify(failureFacts(failure)) : null
        verdict(kind)
        metrics.upstreamAttempt(provider.prefix, route.entry.model.name, kind ?? 'ok')
        if (kind) logAttempt(deps, r.requestId, route.entry.id, attempt.key.index, kind, failure!)
      })
      return out.response
    }
    last = out
    // Whatever of this attempt is still open upstream (a body, a socket) is given up now.
    cancel.abort(out.error)
    if (gone() || out.error.code === 'client_closed_request') {
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
    const open = gone() ? null : plan.circuitsOpen()
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

/**
 * A stream's rescue after content, when some later target can continue from the relayed text
 * (`prefill`): every route is then translated (continuation splices chat chunks), and the
 * continuation's attempt is made here, counted and named like any other. Not for a request that
 * passes through somewhere and carries what translation would lose (a Messages request with
 * thinking, `cache_control` or betas): it keeps its pass-through, and a cut after content ends
 * its stream with the error event, as with no prefill fallback.
 */
function rescueFor<View>(
  r: ChatCall<View>,
  plan: AttemptPlan,
  contextFor: ContextFor<Route<View>>,
): Rescue | undefined {
  const { routes } = r
  if (!routes.slice(1).some((x) => x.entry.model.features.includes('prefill'))) return undefined
  const lost = routes.some((x) => x.forward)
    ? r.surface.forward?.lostInTranslation?.(r.decoded.view, r.request.headers)
    : null
  if (lost) return undefined
  for (const route of routes) {
    if (!route.forward) continue
    try {
      route.translated = r.surface.translate(r.decoded.view, route.entry)
      route.forward = undefined
      // The output allowance the pass-through would have carried (capRoutes wrapped it).
      const cap = r.charge?.cap
      if (cap != null) capRequest(route.translated.request, cap)
    } catch {}
  }
  const { metrics } = r.deps
  /** The continuation's provider and model, once it answers: its attempt is counted when the stream ends. */
  let continued: { prefix: string; model: string } | null = null
  const rescue = new Continuation(
    plan,
    async (attempt, edit, relayed) => {
      const route = routes.find((x) => x.target === attempt.target)!
      if (!route.translated) return null
      // A structured answer is not continued: a JSON document one model began is not another's to
      // finish, and Anthropic refuses a prefilled answer with JSON outputs.
      const format = route.translated.request.response_format
      if (format && format.type !== 'text') return null
      // Made only within what is left of the reservation (and of the client's max_tokens).
      const first = r.answered.entry
      // The relayed part in tokens (DESIGN §11): as the first target's provider billed it as
      // output, and as the next one's will bill it as the prefill's input.
      await prepareOutputCount()
      const output = outputTokenCount(relayed, first.provider.kind)
      const kind = route.entry.provider.kind
      const cap = continuationAllowance(
        r.charge,
        output,
        kind === first.provider.kind ? output : outputTokenCount(relayed, kind),
        first.model,
        route.entry.model,
      )
      if (cap === 0) return null
      const { provider, adapter, ctx } = contextFor(attempt, route)
      const req = edit(route.translated.request)
      if (cap !== null) capRequest(req, cap)
      try {
        const source = adapter.streamPlan
          ? await adapter.streamPlan(req, ctx)
          : await adapter.stream(req, ctx)
        // The continuation answers from here on; refused, the first target's answer stands as its own.
        if (source !== null) {
          r.answered.entry = route.entry
          r.answered.attempts = attempt.n
          // Counted when the stream ends, as it ended (`ended` below).
          continued = { prefix: provider.prefix, model: route.entry.model.name }
        }
        return source
      } catch (e) {
        const err = asGatewayError(e)
        metrics.upstreamAttempt(provider.prefix, route.entry.model.name, classify(failureFacts(err)))
        throw err
      }
    },
    failureFacts,
  )
  return {
    tap: (source) => rescue.tap(source),
    continueWith: async (err) => {
      const first = r.answered.entry
      const source = await rescue.next(
        err,
        r.surface.body?.(r.decoded.view) ?? r.decoded.view,
        r.charge?.reservation ?? null,
        first.provider.kind,
      )
      const usage = rescue.carried()
      if (source && usage) r.answered.first = { entry: first, usage }
      return source
    },
    uncounted: () => rescue.uncounted(),
    ended: (failure) => {
      // The client leaving or the server stopping says nothing of the target.
      const gone = r.request.signal.aborted || r.deps.traffic.stopSignal.aborted
      const kind = rescue.ended(gone ? null : failure)
      if (continued) metrics.upstreamAttempt(continued.prefix, continued.model, kind ?? 'ok')
      continued = null
    },
  }
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
  deps.log.warn('upstream attempt failed', {
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
