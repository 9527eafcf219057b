/**
 * @module
 * The request pipeline every surface runs on: auth → read body → surface decode → route → the
 * model answers the surface's operation → plan → the operation's checks → admission → provider
 * call → surface encode (JSON or SSE) → usage record. Framework-free: it takes a `Request` and gives a `Response`, never throws, and renders
 * every refusal in the surface's error shape. Only requests that pass every check are admitted
 * and counted against the account's limits — once, whatever the surface.
 *
 * @example
 * const pipeline = new Pipeline(deps)
 * app.post('/v1/chat/completions', ({ request, server, set }) =>
 *   pipeline.handle(chatSurface, request, server, set.headers), { parse: 'none' })
 */

import { type Auth, authenticateToken } from '../auth/authenticate.ts'
import { assertKeyReaches, keyReaches } from '../catalogue/key-reach.ts'
import { assertPlanAllows, type CatalogueEntry, planAllows } from '../catalogue/routing.ts'
import { admitStates, rateLimitError, rateLimitHeaders, suspensionPolicy } from '../limits/index.ts'
import { modelCostMicros } from '../limits/model-cost.ts'
import { prepareOutputCount } from '../limits/output-count.ts'
import type { Surcharge } from '../limits/surcharge.ts'
import type { SuspensionPolicy } from '../limits/types.ts'
import { checkModelServes } from '../operations/operation.ts'
import { factsOf } from '../providers/failure-facts.ts'
import { resolveStreamTimeouts, resolveTimeouts } from '../providers/http.ts'
import type { CallContext, Timeouts } from '../providers/types.ts'
import type { RequestTrace } from '../telemetry/index.ts'
import { Exchange, pathOf, requestIds, surfaceOf } from '../traffic/traffic.ts'
import { GatewayError } from '../util/errors.ts'
import { type Answered, callWithAttempts, chatOperation, forwardFor, routesFor } from './attempts.ts'
import { checkJsonContentType, readBodyText } from './body.ts'
import type { Finish } from './call.ts'
import {
  answeringPrice,
  applyReservation,
  capRoutes,
  chargeRefusalError,
  planCharge,
  settle,
} from './charge.ts'
import { checkAndTranslate } from './check.ts'
import type { PipelineDeps } from './deps.ts'
import {
  checkEmbeddings,
  type EmbeddingsCall,
  embeddingsAttempt,
  embeddingsRoutesFor,
} from './embeddings-call.ts'
import { toGatewayError } from './errors.ts'
import { exemptFromIdleTimeout } from './idle-exemption.ts'
import { countInvalidRequest, refusalLimitHeaders } from './invalid-requests.ts'
import { LargeBodies } from './large-bodies.ts'
import { allowanceFor } from './output-growth.ts'
import type { Decoded, Surface, SurfaceCore, Translated } from './surface.ts'

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
    // Null when telemetry is off or the request not sampled: nothing below allocates for it.
    const trace =
      tracer && surface.operation !== 'count_tokens' ? tracer.begin(request, surface.operation) : null
    // A large body is counted from its read to here (a stream's view outlives it: counted less).
    const largeBody = { counted: 0 }
    try {
      return await this.run(surface, request, server, headers, trace, largeBody)
    } catch (e) {
      const id = this.deps.traffic.of(request)?.id ?? headers['x-request-id']
      const err = toGatewayError('UNKNOWN', e, this.deps.log, id)
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

  /**
   * The steps every keyed request shares, also for requests that are not admitted (count_tokens):
   * auth (401/403) → content type and size (415/413) → decode (400) → route (400/404) → the
   * model answers the operation (400 naming `model`) → plan (403).
   */
  private async prepare<View>(
    surface: Pick<SurfaceCore<View>, 'credential' | 'decode' | 'operation' | 'limitHeaders' | 'jsonLimits'>,
    request: Request,
    headers: Record<string, string>,
    ex?: Exchange,
    largeBody?: { counted: number },
  ): Promise<{ auth: Auth; text: string; decoded: Decoded<View>; entry: CatalogueEntry }> {
    const { deps } = this
    const auth = await authenticateToken(deps, surface.credential(request.headers))
    if (ex) {
      ex.account = auth.account.name
      ex.keyPrefix = auth.key.prefix
    }
    try {
      checkJsonContentType(request)
      const text = await readBodyText(
        request,
        deps.config.server.bodyLimitBytes,
        deps.config.server.bodyTimeoutMs,
        surface.jsonLimits,
        deps.traffic.stopSignal,
      )
      const counted = this.largeBodies.read(text.length)
      if (largeBody) largeBody.counted = counted
      // readBodyText held the text to the JSON structural limits while reading it.
      const decoded = surface.decode(text, true)
      const entry = deps.catalogue.resolve(decoded.model)
      if (ex) {
        ex.model = entry.id
        ex.stream = decoded.stream
      }
      checkModelServes(entry.model, surface.operation, entry.id)
      assertPlanAllows({ name: auth.plan.name, models: auth.plan.plan!.models }, entry.id, entry.model)
      assertKeyReaches(auth.key.limits?.models, entry.id)
      return { auth, text, decoded, entry }
    } catch (e) {
      throw await this.refused(surface, auth, headers, e)
    }
  }

  /**
   * A refusal after authentication and before admission (400, 403, 404, 413, 415): counted toward
   * the key's suspension, with the rate-limit headers an admitted answer would carry (not on
   * count_tokens, which is never admitted). Returns it for the caller to throw.
   */
  private async refused(
    surface: Pick<SurfaceCore<unknown>, 'operation' | 'limitHeaders'>,
    auth: Auth,
    headers: Record<string, string>,
    e: unknown,
  ): Promise<unknown> {
    const err = await countInvalidRequest(this.deps, auth, e)
    if (err instanceof GatewayError && err.status < 500 && surface.operation !== 'count_tokens')
      await refusalLimitHeaders(this.deps, auth, surface, headers)
    return err
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

  private async run<View>(
    surface: Surface<View>,
    request: Request,
    server: ServerHandle | null | undefined,
    headers: Record<string, string>,
    trace: RequestTrace | null,
    largeBody: { counted: number },
  ): Promise<Response> {
    const { deps } = this
    const { config, store, clock, metrics, traffic } = deps
    const started = performance.now()
    // What the access log and the request metrics say about this request, filled in as it goes.
    const ex = traffic.of(request) ?? detachedExchange(request, String(headers['x-request-id']))
    const { auth, text, decoded, entry } = await this.prepare(surface, request, headers, ex, largeBody)
    trace?.routed({
      model: entry.id,
      providerKind: entry.provider.kind,
      account: auth.account.name,
      keyId: auth.key.id,
      surface: surface.name,
      // Ours, as the access log keys the request (the request log's gateway_id); a client's beside it.
      requestId: ex.id,
      clientRequestId: ex.clientId,
    })
    const plan = auth.plan.plan!
    const adapter = deps.adapters.get(entry.provider.prefix)!
    if (surface.operation === 'count_tokens') {
      // Not admitted: no limits spent, no usage recorded; the surface's own throttle instead.
      surface.throttle(auth.key.id)
      const ctx = this.callContext(entry, request.signal, ex.id)
      return surface.count(decoded.view, entry, adapter, ctx, request, headers)
    }
    const forward = surface.operation === 'chat' ? forwardFor(surface, entry) : undefined
    let translated: Translated | null = null
    let embeddings: EmbeddingsCall | null = null
    try {
      if (surface.operation === 'embeddings')
        embeddings = checkEmbeddings(surface, decoded.view, entry, adapter, text)
      else translated = checkAndTranslate(surface, decoded.view, entry, forward !== undefined)
    } catch (e) {
      throw await this.refused(surface, auth, headers, e)
    }
    if (translated?.headers) Object.assign(headers, translated.headers)
    const resolve = (id: string) => deps.catalogue.resolve(id)
    // A fallback the plan or the key's model list does not reach is left out of the routes.
    const keyModels = auth.key.limits?.models
    const allowed = (fb: CatalogueEntry) =>
      planAllows(plan.models, fb.id, fb.model) && keyReaches(keyModels, fb.id)
    const chatRoutes =
      surface.operation === 'chat'
        ? routesFor(surface, decoded.view, { entry, forward, translated }, deps.resilience, resolve, allowed)
        : null
    const embeddingsRoutes =
      surface.operation === 'embeddings'
        ? embeddingsRoutesFor(
            surface,
            decoded.view,
            { entry, call: embeddings! },
            text,
            deps.resilience,
            resolve,
            allowed,
            (fb) => deps.adapters.get(fb.provider.prefix)!,
          )
        : null
    let charging: Awaited<ReturnType<typeof planCharge>>
    try {
      const routed = (chatRoutes ?? embeddingsRoutes ?? []).map((r) => r.entry)
      const models = routed.length ? routed : [entry]
      const body =
        surface.operation === 'chat' ? (surface.body?.(decoded.view) ?? decoded.view) : decoded.view
      charging = await planCharge(auth, entry, body, models, surface.inputParam)
    } catch (e) {
      throw await this.refused(surface, auth, headers, e)
    }

    let now = clock.now()
    const rid = String(headers['x-request-id'])
    // A client's own x-request-id is kept and echoed but may repeat; usage is keyed by an id of
    // ours (the exchange's), which is the x-request-id itself when the gateway made that one.
    const gatewayId = ex.id
    // Requests of this account that ended here may still count at their whole reservation (their
    // settlements wait for the usage flush): a charge refused then is tried once more after the
    // flush, and only the last try counts toward a suspension. A request window's refusal is not
    // the flush's to change: only its count toward a suspension is left to make.
    const settling = charging.charge !== undefined && deps.recorder.settling(auth.account.id)
    const admitAt = (at: number, suspension: SuspensionPolicy | null) =>
      store.admit({
        accountId: auth.account.id,
        keyId: auth.key.id,
        model: entry.id,
        requestId: rid,
        gatewayId,
        surface: surface.name,
        stream: decoded.stream,
        now: at,
        rpm: plan.rpm,
        rpd: plan.rpd,
        suspension,
        charge: charging.charge,
      })
    let admit = await admitAt(now, settling ? null : this.suspension)
    if (settling && !admit.admitted) {
      if (admit.charge) {
        await deps.recorder.flush()
        now = clock.now()
        admit = await admitAt(now, this.suspension)
      } else if (this.suspension) {
        const refusal = { accountId: auth.account.id, keyId: auth.key.id, now, suspension: this.suspension }
        admit.suspendedUntil = await store.countRejection(refusal)
      }
    }
    const states = admitStates(admit)
    const limitHeaders = rateLimitHeaders(admit, states, now)
    surface.limitHeaders?.(admit, states, now, limitHeaders)
    Object.assign(headers, limitHeaders)
    if (!admit.admitted) {
      // A budget's 402 is not a rate limit: it is counted by its period, with the other refusals
      // (below) and in the requests by status, not as rate-limited (a 429). A 429 names the
      // resource of the row that refused (the account's rpm / rpd when no charge row did).
      const row = admit.charge?.state.row
      if (row?.resource === 'microdollars') metrics.budgetRefused(row.period!)
      else {
        metrics.limitRejected(row?.resource ?? 'requests', admit.window)
        deps.recorder.recordRateLimited({
          accountId: auth.account.id,
          keyId: auth.key.id,
          model: entry.id,
          surface: surface.name,
          at: now,
        })
      }
      const refused = admit.charge
        ? await chargeRefusalError(
            admit.charge,
            charging.charge!,
            (rows) => store.rowStates({ accountId: auth.account.id, keyId: auth.key.id, now, rows }),
            now,
            headers,
          )
        : rateLimitError(admit, now, limitHeaders)
      deps.recorder.recordRefusal({
        accountId: auth.account.id,
        keyId: auth.key.id,
        code: refused.code,
        status: refused.status,
        at: now,
      })
      throw refused
    }
    const reservation = admit.reservation
    const capped = reservation ? applyReservation(reservation, charging, now, headers) : null

    // Long upstream waits must not trip Bun's socket idle timeout (our own timeouts apply),
    // but only while this request runs: `finish` restores it for the pooled connection.
    const restoreIdle = exemptFromIdleTimeout(server, request, config.server.idleTimeoutS)
    // Who answered, after how many upstream attempts: filled in by the attempt loop.
    const answered: Answered = { entry, attempts: 0 }
    const finish: Finish = (status, usage, err, ttftMs, unaccounted) => {
      // A stream cut at its total limit may have a client that stopped reading: its socket
      // must not wait out the whole idle timeout for it.
      restoreIdle(decoded.stream && err?.code === 'upstream_timeout' ? 1 : undefined)
      const by = answered.entry
      // An upstream error is a failed call, under the provider that failed last. With no call made
      // (every circuit open) the 503 is the gateway's refusal: no provider's error, whichever
      // provider the model asked for is on (the open circuits are `switchyard_circuit_state`).
      if (err?.code === 'upstream_circuit_open' && answered.attempts === 0) metrics.circuitRefused(entry.id)
      else if (err && err.code !== 'client_closed_request' && err.code !== 'shutting_down') {
        metrics.upstreamError(by.provider.prefix, err.code)
      }
      ex.ttftMs = ttftMs
      // At the answering model's prices (a fallback's, DESIGN §10): failed attempts are not billed.
      // A continued stream's parts each at their own model's (the first part's usage is carried).
      const first = answered.first
      const surcharge = charging.surcharge
      let costMicros = first
        ? partsCost(first, by, usage, surcharge)
        : modelCostMicros(by.model, usage, surcharge)
      const settlement =
        reservation &&
        settle(
          reservation,
          auth.account.id,
          usage,
          costMicros,
          err !== null,
          ttftMs !== null,
          unaccounted,
          answeringPrice(
            first ? [first.entry.model, by.model] : [by.model],
            surcharge,
            reservation.tokens - reservation.outputTokens,
          ),
        )
      // Settled from what was relayed (no count of the whole answer from the upstream): the log
      // row shows what the account was charged, not a second estimate beside it.
      if (settlement?.counted) {
        usage = settlement.counted
        costMicros = settlement.micros
      }
      // The tokens recorded were worked out by the gateway (settled from what was relayed, or a
      // left stream's estimate), not read from the upstream's count of the whole answer: the log
      // row and the usage counters say so (DESIGN §11 "One ledger"). Nothing recorded: no flag.
      const estimated =
        unaccounted !== undefined && usage !== null && usage.prompt_tokens + usage.completion_tokens > 0
      ex.promptTokens = usage?.prompt_tokens ?? null
      ex.completionTokens = usage?.completion_tokens ?? null
      ex.costMicros = costMicros
      ex.estimated = estimated
      ex.errorCode = err?.code ?? null
      ex.attempts = answered.attempts
      if (by !== entry) ex.answeredBy = by.id
      // A stream ends after the handler returned: its end is the exchange's end.
      if (decoded.stream) traffic.end(ex, status)
      deps.recorder.record({
        gatewayId: admit.gatewayId,
        requestId: rid,
        surface: surface.name,
        stream: decoded.stream,
        status,
        promptTokens: usage?.prompt_tokens ?? null,
        completionTokens: usage?.completion_tokens ?? null,
        costMicros,
        latencyMs: Math.round(performance.now() - started),
        // Whole milliseconds: PostgreSQL's INTEGER column refuses a fraction (and the batch with it).
        ttftMs: ttftMs === null ? null : Math.round(ttftMs),
        errorCode: err?.code ?? null,
        attempts: answered.attempts || null,
        answeredBy: by === entry ? null : by.id,
        estimated,
        settlement,
        counted: {
          accountId: auth.account.id,
          keyId: auth.key.id,
          model: entry.id,
          at: admit.loggedAt ?? admit.at ?? now,
        },
      })
      // Every upstream refusal's text is logged (a 4xx is as much the operator's to see: a schema the
      // provider refuses, a key it does not take), and every failure of ours at 500 and above.
      const upstreamRefused = factsOf(err)?.status !== undefined
      if (err && (err.status >= 500 || upstreamRefused) && err.code !== 'shutting_down')
        logUpstreamFailure(deps, ex, by, err)
      trace?.finish({
        status,
        errorCode: err?.code ?? null,
        usage,
        responseModel: by.id,
        upstreamModel: by.model.upstream_name ?? by.model.name,
        costMicros,
        attempts: answered.attempts,
      })
    }
    ex.deferred = decoded.stream
    const run = {
      deps,
      request,
      headers,
      finish,
      answered,
      // Ours, never the client's x-request-id: the answer's ids are made from it (DESIGN §16).
      requestId: ex.id,
      trace,
      timeouts: (prefix: string) => (decoded.stream ? this.streamTimeouts : this.timeouts).get(prefix)!,
    }
    if (surface.operation === 'embeddings') {
      const attempt = embeddingsAttempt(surface, decoded.view, headers, finish)
      return callWithAttempts({ ...run, routes: embeddingsRoutes!, attempt })
    }
    // Under a token or money limit the answer is counted as it arrives and cut at the allowance
    // (output-cut.ts): by the chunk gate on a translated route, by its surface's gate over the
    // raw events on a pass-through (Forwarding.cut), which keeps its byte relay.
    const metered = reservation && charging.charge?.rows.some((r) => r.resource !== 'requests')
    if (metered) {
      // o200k's tables, loaded by the first metered request (a resolved promise after it): until
      // then text would count as its bytes, and an answer be cut at half its allowance.
      await prepareOutputCount()
    }
    const routes =
      capped !== null
        ? capRoutes(chatRoutes!, surface.name, capped, charging.requested === null)
        : chatRoutes!
    const charge = {
      reservation: reservation ?? null,
      requested: charging.requested,
      cap: capped,
      // Uncapped: the hold grows toward what the upstream was sent, n choices of it (output-growth.ts).
      allowance: metered
        ? allowanceFor(
            reservation!,
            entry.provider.kind,
            charging.charge && charging.requested === null && capped !== null
              ? {
                  limiter: store,
                  accountId: auth.account.id,
                  keyId: auth.key.id,
                  charge: charging.charge,
                  cap: capped * charging.choices,
                  step: charging.charge.wantOutput,
                  now: () => clock.now(),
                }
              : null,
          )
        : undefined,
    }
    const chat = {
      deps,
      surface,
      routes,
      decoded,
      bodyText: text,
      request,
      headers,
      finish,
      answered,
      charge,
    }
    return callWithAttempts({ ...run, routes, ...chatOperation(chat) })
  }
}

/**
 * A continued stream's cost: its first part (`first.usage`, carried into `usage`) at the first
 * model's prices, the rest at the continuing model's.
 */
function partsCost(
  first: NonNullable<Answered['first']>,
  by: CatalogueEntry,
  usage: { prompt_tokens: number; completion_tokens: number } | null,
  surcharge: Surcharge,
): number | null {
  if (!usage) return null
  const own = {
    prompt_tokens: Math.max(0, usage.prompt_tokens - first.usage.prompt_tokens),
    completion_tokens: Math.max(0, usage.completion_tokens - first.usage.completion_tokens),
  }
  // Both parts at the request's tier; its per-call tools charged once, with the first part.
  const a = modelCostMicros(first.entry.model, first.usage, surcharge)
  const b = modelCostMicros(by.model, own, { ...surcharge, calls: [] })
  return a === null && b === null ? null : (a ?? 0) + (b ?? 0)
}

function logUpstreamFailure(
  deps: PipelineDeps,
  ex: Exchange,
  entry: CatalogueEntry,
  err: GatewayError,
): void {
  deps.log.warn('upstream failure', {
    request_id: ex.id,
    ...(ex.clientId !== null ? { client_request_id: ex.clientId } : {}),
    model: entry.id,
    status: err.status,
    code: err.code,
    message: err.message,
    detail: err.detail,
  })
}

/** A request run without the app (the pipeline called directly): an exchange no traffic tracks. */
function detachedExchange(request: Request, echoed: string): Exchange {
  const { id, clientId } = requestIds(request, echoed)
  return new Exchange(id, surfaceOf(pathOf(request.url)), request.method, '', clientId)
}
