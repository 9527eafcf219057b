/**
 * @module
 * The chat operation's stream rescue after content (DESIGN §10, pipeline/continuation.ts): when a
 * later target can continue from the relayed text (`prefill`), every route is translated
 * (continuation splices chat chunks) and the continuation's attempt is made here, within what is
 * left of the reservation, counted and named like any other attempt.
 */
import { outputTokenCount } from '../../limits/output-count.ts'
import { type AttemptPlan, classify } from '../../providers/resilience/index.ts'
import { type ContextFor, failureFacts } from '../attempts.ts'
import { wholePlan } from '../call.ts'
import type { Rescue } from '../call-types.ts'
import { Continuation } from '../continuation.ts'
import { toGatewayError } from '../errors.ts'
import { answerFamily } from '../output-allowance.ts'
import { capRequest, continuationAllowance, continuationInput } from '../output-cap.ts'
import { type ChatCall, type Route, wholeStream } from './chat-routes.ts'

/**
 * A stream's rescue after content, when some later target can continue from the relayed text
 * (`prefill`): every route is then translated (continuation splices chat chunks), and the
 * continuation's attempt is made here, counted and named like any other. Not for a request that
 * passes through somewhere and carries what translation would lose (a Messages request with
 * thinking, `cache_control` or betas): it keeps its pass-through, and a cut after content ends
 * its stream with the error event, as with no prefill fallback.
 */
export function rescueFor<View>(
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
      // The relayed part in tokens (DESIGN §11): as the first target's model billed it as
      // output, and as the next one's will bill it as the prefill's input — each in its family.
      const was = answerFamily(first)
      const family = answerFamily(route.entry)
      const output = outputTokenCount(relayed, was)
      const prefill = family === was ? output : outputTokenCount(relayed, family)
      const cap = continuationAllowance(r.charge, output, prefill, first.model, route.entry.model)
      if (cap === 0) return null
      const { provider, adapter, ctx } = contextFor(attempt, route)
      // Cut at `cap` under a limit (below): a whole answer is split into pieces as far as that.
      if (cap !== null && r.charge?.allowance) ctx.cutWithin = cap
      const req = edit(route.translated.request)
      if (cap !== null) capRequest(req, cap)
      try {
        // A target without `streaming` is asked for JSON, served as the stream (chat-routes.ts).
        const source = wholeStream(true, route.entry)
          ? wholePlan(await adapter.complete(req, ctx), ctx)
          : await adapter.stream(req, ctx)
        // The continuation answers from here on; refused, the first target's answer stands as its own.
        if (source !== null) {
          // Under a limit its answer is counted as its provider counts and cut at that cap, its
          // prompt the answer's too (DESIGN §11: an upstream that ignores the cap is cut at it).
          const { allowance, reservation } = r.charge ?? {}
          if (allowance && reservation && cap !== null)
            allowance.continueWithin(cap, continuationInput(reservation, prefill), family)
          r.answered.entry = route.entry
          r.answered.attempts = attempt.n
          // Counted when the stream ends, as it ended (`ended` below).
          continued = { prefix: provider.prefix, model: route.entry.model.name }
        }
        return source
      } catch (e) {
        const err = toGatewayError(e, 'upstream')
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
        r.surface.body?.(r.decoded.view, [first]) ?? r.decoded.view,
        r.charge?.reservation ?? null,
        answerFamily(first),
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
