/**
 * @module
 * The chat operation (Chat Completions, Messages, Responses): each route either passes the
 * client's body through to a provider of the surface's own wire (`Forwarding`) or sends the
 * canonical request translated; JSON or a stream either way (call.ts). Before admission: the
 * feature check, the surface's limits and the translation (check.ts). After it: the output cap
 * and the allowance the limits set (chat-cap.ts, output-growth.ts); a stream's rescue after
 * content is chat-continuation.ts.
 *
 * @example
 * OPERATIONS.chat === chatOperation // operations/index.ts
 */
import { callProvider } from '../call.ts'
import { checkAndTranslate } from '../check.ts'
import type { AdmittedOperation, Attempts } from '../operation.ts'
import { answerFamily } from '../output-allowance.ts'
import type { ContinuationCharge } from '../output-cap.ts'
import { ChunkGate } from '../output-cut.ts'
import { allowanceFor } from '../output-growth.ts'
import type { CutGate } from '../stream/types.ts'
import type { ChatSurface, EncodeContext, Forwarding, Translated } from '../surface.ts'
import { capRoutes } from './chat-cap.ts'
import { rescueFor } from './chat-continuation.ts'
import { type ChatCall, forwardFor, type Route, routesFor, wholeStream } from './chat-routes.ts'

/**
 * The cut at the output allowance for an attempt of `kind`, when a token or money limit applies:
 * the chunk gate on a translated route, the surface's own over the raw events on a pass-through.
 * None for a JSON request to a model that does not stream (DESIGN §3: it is never asked for a
 * stream): its answer comes whole, within the whole cap held for it at admission (`ChargePlan.grows`).
 */
function gateFor<View>(
  charge: ContinuationCharge | undefined,
  entry: Route<View>['entry'],
  forward: Forwarding<View> | undefined,
  stream: boolean,
): ChunkGate | CutGate<Uint8Array> | undefined {
  const allowance = charge?.allowance
  const r = charge?.reservation
  if (!allowance || !r) return undefined
  if (!stream && !entry.model.features.includes('streaming')) return undefined
  allowance.family = answerFamily(entry)
  if (forward) return forward.cut(allowance, r.tokens - r.outputTokens, !stream)
  return new ChunkGate(allowance, r.tokens - r.outputTokens)
}

/** The chat operation's attempt (`callProvider`: pass-through or translated, JSON or stream) and rescue. */
function chatAttempts<View>(c: ChatCall<View>): Attempts<Route<View>> {
  return {
    routes: c.routes,
    attempt: (route, { provider, adapter, ctx }, hasFallback, rescue) => {
      const encodeCtx: EncodeContext<View> = {
        modelId: route.entry.id,
        upstreamModel: route.entry.model.upstream_name ?? route.entry.model.name,
        provider,
        requestId: ctx.requestId,
        view: c.decoded.view,
        includeUsage: route.translated?.includeUsage ?? false,
      }
      const gate = gateFor(c.charge, route.entry, route.forward, c.decoded.stream)
      // A whole answer read as a stream is split into pieces only as far as the cut may fall.
      if (gate) ctx.cutWithin = c.charge?.allowance?.most
      // A JSON answer under a limit is asked as a stream: in the forwarding's one edit where it can.
      const asStream = gate !== undefined && !c.decoded.stream
      return callProvider({
        deps: c.deps,
        surface: c.surface,
        adapter,
        ctx,
        encodeCtx,
        stream: c.decoded.stream,
        call: route.forward
          ? {
              forward: route.forward.request(c.decoded.view, route.entry, c.bodyText, c.request.headers, {
                streamed: asStream,
              }),
              relay: route.forward,
            }
          : { request: route.translated!.request },
        headers: c.headers,
        hasFallback,
        rescue,
        whole: wholeStream(c.decoded.stream, route.entry),
        finish: c.finish,
        signal: c.request.signal,
        gate,
      })
    },
    rescue: c.decoded.stream ? (plan, contextFor) => rescueFor(c, plan, contextFor) : undefined,
  }
}

/** What the checks chose for the model named: its pass-through, or its translated request. */
interface Checked<View> {
  forward: Forwarding<View> | undefined
  translated: Translated | null
}

export const chatOperation: AdmittedOperation<
  unknown,
  ChatSurface<unknown>,
  Checked<unknown>,
  Route<unknown>
> = {
  check(p) {
    const forward = forwardFor(p.surface, p.entry)
    const translated = checkAndTranslate(p.surface, p.decoded.view, p.entry, forward !== undefined)
    if (translated?.headers) Object.assign(p.headers, translated.headers)
    return { forward, translated }
  },
  routes: (p, checked, fallbacks) =>
    routesFor(
      p.surface,
      p.decoded,
      p.request.headers,
      { entry: p.entry, ...checked },
      p.deps.resilience,
      fallbacks,
    ),
  charged: (p, entries) => p.surface.body?.(p.decoded.view, entries) ?? p.decoded.view,
  attempt(p, routes, { reservation, charging, capped, finish, answered }) {
    const { deps, auth } = p
    // Under a token or money limit the answer is counted as it arrives and cut at the allowance
    // (output-cut.ts): by the chunk gate on a translated route, by its surface's gate over the
    // raw events on a pass-through (Forwarding.cut), which keeps its byte relay.
    const metered = reservation !== null && charging.metered
    const charge: ContinuationCharge = {
      reservation,
      requested: charging.requested,
      cap: capped,
      // Uncapped: the hold grows toward what the upstream was sent, n choices of it (output-growth.ts).
      allowance: metered
        ? allowanceFor(
            reservation!,
            answerFamily(p.entry),
            charging.charge && charging.requested === null && charging.grows && capped !== null
              ? {
                  limiter: deps.store,
                  accountId: auth.account.id,
                  keyId: auth.key.id,
                  charge: charging.charge,
                  cap: capped * charging.choices,
                  step: charging.charge.wantOutput,
                  now: () => deps.clock.now(),
                }
              : null,
          )
        : undefined,
    }
    const c: ChatCall<unknown> = {
      deps,
      surface: p.surface,
      routes: capped !== null ? capRoutes(routes, capped, charging.requested === null) : routes,
      decoded: p.decoded,
      bodyText: p.text,
      request: p.request,
      headers: p.headers,
      finish,
      answered,
      charge,
    }
    return chatAttempts(c)
  },
}
