/**
 * @module
 * The conductor every surface runs on: prepare (auth → read body → surface decode → route → the
 * model answers the surface's operation → plan) → the operation's checks and routes → charge →
 * admit → the attempt loop → finish (settle and record). It names no operation and no surface:
 * what differs is the operation's (operation.ts, operations/) and the surface's (surface.ts).
 * Framework-free: it takes a `Request` and gives a `Response`, never throws, and renders every
 * refusal in the surface's error shape. Only requests that pass every check are admitted and
 * counted against the account's limits — once, whatever the surface.
 *
 * @example
 * const pipeline = new Pipeline(deps)
 * app.post('/v1/chat/completions', ({ request, server, set }) =>
 *   pipeline.handle(chatSurface, request, server, set.headers), { parse: 'none' })
 */

import type { CatalogueEntry } from '../catalogue/entry.ts'
import { keyReaches } from '../catalogue/key-reach.ts'
import { fallbacksOf } from '../catalogue/reach.ts'
import { planAllows } from '../catalogue/routing.ts'
import { suspensionPolicy } from '../limits/index.ts'
import { resolveStreamTimeouts, resolveTimeouts } from '../providers/http.ts'
import type { CallContext, Timeouts } from '../providers/types.ts'
import type { RequestTrace } from '../telemetry/index.ts'
import { admission, limitHeadersOf, readmit, refusalOf } from './admit.ts'
import { type Answered, callWithAttempts, type Targeted } from './attempts.ts'
import { applyReservation, type ChargePlan, planCharge } from './charge.ts'
import type { PipelineDeps } from './deps.ts'
import { toGatewayError } from './errors.ts'
import { finisher } from './finish.ts'
import { exemptFromIdleTimeout } from './idle-exemption.ts'
import { LargeBodies } from './large-bodies.ts'
import type { PipelineOperation, Prepared } from './operation.ts'
import { operationOf } from './operations/index.ts'
import { exchangeOf, prepare, refusedBefore } from './prepare.ts'
import type { Surface } from './surface.ts'

/**
 * The first of a request's models (a virtual model's members, in order) whose checks the request
 * passes, with what they chose: a member that cannot serve the request (its features, its limits)
 * is skipped, not failed (DESIGN §13). With none passing, the first one's refusal.
 */
function firstChecked(
  op: Extract<PipelineOperation, { check: unknown }>,
  reqs: Prepared<unknown>[],
): [Prepared<unknown>, unknown] {
  let refusal: unknown
  for (const req of reqs) {
    try {
      return [req, op.check(req)]
    } catch (e) {
      refusal ??= e
    }
  }
  throw refusal
}

const entryOf = (r: Targeted) => r.entry

/** Bun's server as far as the pipeline needs it: lifting the socket idle timeout. */
export interface ServerHandle {
  timeout(request: Request, seconds: number): void
}

export class Pipeline {
  private readonly timeouts: Map<string, Timeouts>
  private readonly streamTimeouts: Map<string, Timeouts>
  private readonly suspension
  /** Dead large bodies collected at a bounded lag (large-bodies.ts). */
  private readonly largeBodies = new LargeBodies()
  /** A catalogue entry by id, from the catalogue of the moment (one function, not one a request). */
  private readonly modelOf = (id: string) => this.deps.catalogue.model(id)

  constructor(private readonly deps: PipelineDeps) {
    const { config } = deps
    this.timeouts = new Map(config.providers.map((p) => [p.prefix, resolveTimeouts(p)]))
    this.streamTimeouts = new Map(config.providers.map((p) => [p.prefix, resolveStreamTimeouts(p)]))
    this.suspension = suspensionPolicy(config)
  }

  /**
   * Runs one request through every step. `headers` are the response headers so far (the request
   * id); the pipeline adds the rate-limit headers to them and returns the finished response.
   */
  async handle<View>(
    surface: Surface<View>,
    request: Request,
    server: ServerHandle | null | undefined,
    headers: Record<string, string>,
  ): Promise<Response> {
    const { tracer } = this.deps
    const op = operationOf(surface)
    // Null when telemetry is off or the request not sampled: nothing below allocates for it.
    const trace = tracer && op.admitted !== false ? tracer.begin(request, surface.operation) : null
    // A large body is counted from its read to here (a stream's view outlives it: counted less).
    const largeBody = { counted: 0 }
    try {
      return await this.run(surface, op, request, server, headers, trace, largeBody)
    } catch (e) {
      const id = this.deps.traffic.of(request)?.id ?? headers['x-request-id']
      const err = toGatewayError(e, 'request', this.deps.log, id)
      trace?.finish({
        status: err.status,
        errorCode: err.code,
        usage: null,
        responseModel: null,
        upstreamModel: null,
        costMicros: null,
        attempts: 0,
      })
      this.deps.traffic.refused(request, err)
      return surface.errorResponse(err, headers)
    } finally {
      this.largeBodies.done(largeBody.counted)
    }
  }

  /** What an adapter call needs: the provider's timeouts and the client's signal. */
  callContext(entry: CatalogueEntry, signal: AbortSignal, requestId: string): CallContext {
    return {
      provider: entry.provider,
      model: entry.model,
      signal,
      requestId,
      timeouts: this.timeouts.get(entry.provider.prefix)!,
    }
  }

  private async run(
    surface: Surface<unknown>,
    op: PipelineOperation,
    request: Request,
    server: ServerHandle | null | undefined,
    headers: Record<string, string>,
    trace: RequestTrace | null,
    largeBody: { counted: number },
  ): Promise<Response> {
    const { deps } = this
    const started = performance.now()
    // What the access log and the request metrics say about this request, filled in as it goes.
    const ex = exchangeOf(deps, request, headers)
    const admitted = op.admitted !== false
    const prepared = await prepare(deps, this.largeBodies, surface, admitted, request, headers, ex, largeBody)
    const { auth, text, decoded, members, session } = prepared
    // Ours, never the client's x-request-id (it may repeat): usage and the answer's ids are made from it.
    const reqOf = (entry: CatalogueEntry): Prepared<unknown> => ({
      auth,
      text,
      decoded,
      deps,
      surface,
      request,
      headers,
      entry,
      adapter: deps.adapters.get(entry.provider.prefix)!,
      requestId: ex.id,
      ex,
      trace,
      started,
      calls: this,
    })
    // Made only when traced (an arrow is a new function each request).
    const routed =
      trace &&
      ((req: Prepared<unknown>) =>
        trace.routed({
          model: req.entry.id,
          providerKind: req.entry.provider.kind,
          account: auth.account.name,
          keyId: auth.key.id,
          surface: surface.name,
          // Ours, as the access log keys the request (the request log's gateway_id); a client's beside it.
          requestId: ex.id,
          clientRequestId: ex.clientId,
        }))
    // Not admitted: no limits spent, no usage recorded (count_tokens).
    if (op.admitted === false) {
      const only = reqOf(members[0]!)
      routed?.(only)
      return op.answer(only)
    }
    const plan = auth.plan.plan!
    // A fallback the plan or the key's model list does not reach is left out of the routes.
    const keyModels = auth.key.limits?.models
    const allowed = (fb: CatalogueEntry) =>
      planAllows(plan.models, fb.id, fb.model) && keyReaches(keyModels, fb.id, fb.model.tier)
    const reqs = members.map(reqOf)
    let req = reqs[0]!
    let checked: unknown
    let routes: Targeted[]
    let charging: ChargePlan
    try {
      try {
        ;[req, checked] = firstChecked(op, reqs)
      } finally {
        // Refused too: the trace and the access log name the model tried first.
        ex.model = req.entry.id
        routed?.(req)
      }
      const fallbacks = fallbacksOf(req.entry, members, this.modelOf, allowed)
      routes = op.routes(req, checked, fallbacks)
      const entries = routes.map(entryOf)
      const planned = planCharge(auth, req.entry, op.charged(req, entries), entries, surface.inputParam)
      charging = planned instanceof Promise ? await planned : planned
    } catch (e) {
      throw await refusedBefore(deps, true, auth, headers, e, surface)
    }
    const { entry } = req
    let now = deps.clock.now()
    const charge = charging.charge
    // A refusal while this account's settlements wait for the usage flush is tried again after it.
    const settling = charge !== undefined && deps.recorder.settling(auth.account.id)
    // A charged request's refusal counts toward a suspension once its reason is known (refusalOf).
    const suspension = charge ? null : this.suspension
    let admit = await deps.store.admit(admission(req, charge, now, suspension))
    if (settling && !admit.admitted) ({ admit, now } = await readmit(req, admit, charge, now))
    const limitHeaders = limitHeadersOf(req, admit, now)
    if (!admit.admitted)
      throw await refusalOf(req, admit, charge, now, limitHeaders, charge ? this.suspension : null)
    const reservation = admit.reservation ?? null
    const capped = reservation ? applyReservation(reservation, charging, now, headers) : null
    // Long upstream waits must not trip Bun's socket idle timeout (our own timeouts apply),
    // but only while this request runs: `finish` restores it for the pooled connection.
    const restoreIdle = exemptFromIdleTimeout(server, request, deps.config.server.idleTimeoutS)
    // Who answered, after how many upstream attempts: filled in by the attempt loop.
    const answered: Answered = { entry, attempts: 0 }
    const finish = finisher(req, admit, charging.surcharge, now, answered, restoreIdle)
    ex.deferred = decoded.stream
    const attempts = op.attempt(req, routes, { reservation, charging, capped, finish, answered })
    return callWithAttempts({
      deps,
      request,
      headers,
      finish,
      answered,
      requestId: ex.id,
      trace,
      session,
      timeouts: decoded.stream ? this.streamTimeouts : this.timeouts,
      ...attempts,
    })
  }
}
