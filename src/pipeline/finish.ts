/**
 * @module
 * The end of an admitted request, once, whatever the operation: the reservation settled at the
 * answering model's prices (charge.ts `settle`), the access line and the metrics filled in, the
 * outcome recorded by the usage flush, an upstream failure logged, the trace finished.
 *
 * @example
 * const finish = finisher(req, admit, charging.surcharge, now, answered, restoreIdle)
 * finish(200, usage, null, ttftMs)
 */
import type { CatalogueEntry } from '../catalogue/entry.ts'
import { modelCostMicros } from '../limits/model-cost.ts'
import type { Surcharge } from '../limits/surcharge.ts'
import type { AdmitResult, FirstPart } from '../limits/types.ts'
import { factsOf } from '../providers/failure-facts.ts'
import type { Exchange } from '../traffic/traffic.ts'
import { type GatewayError, gatewaysOwnFailure } from '../util/errors.ts'
import type { Answered } from './attempts.ts'
import type { Finish } from './call-types.ts'
import { answeringPrice, settle } from './charge.ts'
import type { PipelineDeps } from './deps.ts'
import type { Prepared } from './operation.ts'

/**
 * The request's `Finish`: `admit` its admission at `now`, `answered` filled in by the attempt loop,
 * `restoreIdle` the socket's idle timeout given back (`exemptFromIdleTimeout`).
 */
export function finisher(
  req: Prepared<unknown>,
  admit: Extract<AdmitResult, { admitted: true }>,
  surcharge: Surcharge,
  now: number,
  answered: Answered,
  restoreIdle: (seconds?: number) => void,
): Finish {
  const { deps, entry, auth, ex, trace } = req
  const { metrics, traffic } = deps
  const stream = req.decoded.stream
  const reservation = admit.reservation
  return (status, usage, err, ttftMs, unaccounted) => {
    // A stream cut at its total limit may have a client that stopped reading: its socket
    // must not wait out the whole idle timeout for it.
    restoreIdle(stream && err?.code === 'upstream_timeout' ? 1 : undefined)
    const by = answered.entry
    // An upstream error is a failed call, under the provider that failed last. With no call made
    // (every circuit open) the 503 is the gateway's refusal: no provider's error, whichever
    // provider the model asked for is on (the open circuits are `switchyard_circuit_state`); nor
    // is the gateway's own failure (its code threw, its store did not answer).
    const circuitRefusal = err?.code === 'upstream_circuit_open' && answered.attempts === 0
    if (circuitRefusal) metrics.circuitRefused(entry.id)
    else if (
      err &&
      err.code !== 'client_closed_request' &&
      err.code !== 'shutting_down' &&
      !gatewaysOwnFailure(err.code)
    ) {
      metrics.upstreamError(by.provider.prefix, err.code)
    }
    ex.ttftMs = ttftMs
    // At the answering model's prices (a fallback's, DESIGN §10): failed attempts are not billed.
    // A continued stream's parts each at their own model's (the first part's usage is carried).
    const first = answered.first
    const parts = first ? partsCost(first, by, usage, surcharge) : null
    let costMicros = parts ? parts.total : modelCostMicros(by.model, usage, surcharge)
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
        // Only a settlement from what was relayed prices it: no list and no price walk otherwise.
        unaccounted
          ? answeringPrice(
              first ? [first.entry.model, by.model] : [by.model],
              surcharge,
              reservation.tokens - reservation.outputTokens,
            )
          : null,
      )
    // Settled from what was relayed (no count of the whole answer from the upstream): the log
    // row shows what the account was charged, not a second estimate beside it.
    if (settlement?.counted) {
      usage = settlement.counted
      costMicros = settlement.micros
    }
    // The tokens recorded were worked out by the gateway (settled from what was relayed, or a
    // left stream's estimate), not read from the upstream's count of the whole answer — in part
    // too: a continued stream's first part is the gateway's count of what it relayed, whatever
    // the continuation reported. The log row and the usage counters say so (DESIGN §11 "One
    // ledger"). Nothing recorded: no flag.
    const estimated =
      (unaccounted !== undefined || first !== undefined) &&
      usage !== null &&
      usage.prompt_tokens + usage.completion_tokens > 0
    ex.promptTokens = usage?.prompt_tokens ?? null
    ex.completionTokens = usage?.completion_tokens ?? null
    ex.costMicros = costMicros
    ex.estimated = estimated
    ex.errorCode = err?.code ?? null
    ex.attempts = answered.attempts
    if (by !== entry) ex.answeredBy = by.id
    const firstPart = first && parts && usage ? firstPartOf(first, parts.first, usage, costMicros) : null
    ex.firstPart = firstPart
    // A stream ends after the handler returned: its end is the exchange's end.
    if (stream) traffic.end(ex, status)
    deps.recorder.record({
      gatewayId: admit.gatewayId,
      requestId: String(req.headers['x-request-id']),
      surface: req.surface.name,
      stream,
      status,
      promptTokens: usage?.prompt_tokens ?? null,
      completionTokens: usage?.completion_tokens ?? null,
      cachedTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
      cacheWriteTokens: usage?.prompt_tokens_details?.cache_write_tokens ?? 0,
      costMicros,
      latencyMs: Math.round(performance.now() - req.started),
      // Whole milliseconds: PostgreSQL's INTEGER column refuses a fraction (and the batch with it).
      ttftMs: ttftMs === null ? null : Math.round(ttftMs),
      errorCode: err?.code ?? null,
      attempts: answered.attempts || null,
      answeredBy: by === entry ? null : by.id,
      firstPart,
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
    if (circuitRefusal) logCircuitRefusal(deps, ex, entry, err)
    else if (err && (err.status >= 500 || upstreamRefused) && err.code !== 'shutting_down')
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
}

/**
 * A continued stream's cost (`total`): its first part (`first.usage`, carried into `usage`) at the
 * first model's prices (`first`), the rest at the continuing model's.
 */
function partsCost(
  first: NonNullable<Answered['first']>,
  by: CatalogueEntry,
  usage: { prompt_tokens: number; completion_tokens: number } | null,
  surcharge: Surcharge,
): { total: number | null; first: number | null } | null {
  if (!usage) return null
  const own = {
    prompt_tokens: Math.max(0, usage.prompt_tokens - first.usage.prompt_tokens),
    completion_tokens: Math.max(0, usage.completion_tokens - first.usage.completion_tokens),
  }
  // Both parts at the request's tier; its per-call tools charged once, with the first part.
  const a = modelCostMicros(first.entry.model, first.usage, surcharge)
  const b = modelCostMicros(by.model, own, { ...surcharge, calls: [] })
  return { total: a === null && b === null ? null : (a ?? 0) + (b ?? 0), first: a }
}

/**
 * The first part as booked to its model (DESIGN §11 "One ledger"): its tokens and cost, never more
 * than the request's recorded ones (a settlement from what was relayed may have charged less).
 */
function firstPartOf(
  first: NonNullable<Answered['first']>,
  cost: number | null,
  usage: { prompt_tokens: number; completion_tokens: number },
  total: number | null,
): FirstPart {
  return {
    model: first.entry.id,
    promptTokens: Math.min(first.usage.prompt_tokens, usage.prompt_tokens),
    completionTokens: Math.min(first.usage.completion_tokens, usage.completion_tokens),
    costMicros: Math.min(cost ?? 0, total ?? 0),
  }
}

/**
 * A 503 `upstream_circuit_open` that called nothing: the gateway's refusal, not an upstream's
 * failure (the failures that opened the circuits were logged as such), so `info`, under the model
 * asked for.
 */
function logCircuitRefusal(deps: PipelineDeps, ex: Exchange, entry: CatalogueEntry, err: GatewayError): void {
  deps.log.info('circuit open: refused, no upstream called', failureFields(ex, entry, err))
}

function logUpstreamFailure(
  deps: PipelineDeps,
  ex: Exchange,
  entry: CatalogueEntry,
  err: GatewayError,
): void {
  deps.log.warn('upstream failure', {
    ...failureFields(ex, entry, err),
    message: err.message,
    detail: err.detail,
  })
}

/** What both failure lines name: the request, the model asked for, the answer's status and code. */
function failureFields(ex: Exchange, entry: CatalogueEntry, err: GatewayError): Record<string, unknown> {
  return {
    request_id: ex.id,
    ...(ex.clientId !== null ? { client_request_id: ex.clientId } : {}),
    model: entry.id,
    status: err.status,
    code: err.code,
  }
}
