/**
 * @module
 * The chat operation's routes: one per target the request fits (the model, then its fallbacks),
 * each either passed through to a provider of the surface's own wire or translated; and the chat
 * request as the attempts and the rescue see it.
 */
import type { CatalogueEntry } from '../../catalogue/entry.ts'
import type { Resilience, Target } from '../../providers/resilience/index.ts'
import type { Answered } from '../attempts.ts'
import type { Finish } from '../call-types.ts'
import { checkAndTranslate } from '../check.ts'
import type { PipelineDeps } from '../deps.ts'
import type { ContinuationCharge } from '../output-cap.ts'
import type { ChatSurface, Decoded, Forwarding, Translated } from '../surface.ts'

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
  entry: Pick<CatalogueEntry, 'provider'>,
): Forwarding<View> | undefined {
  const fwd = surface.forward
  return fwd?.kind === entry.provider.kind && (fwd.accepts?.(entry.provider) ?? true) ? fwd : undefined
}

/**
 * The primary's route, then one per fallback the request fits (`fallbacks`: those the plan and
 * key reach, in order): passing the feature check and the surface's limits for that model (a
 * fallback that would refuse the request is left out, silently: the primary's answer stands for it).
 * A stream request's fallback without `streaming` fits it: that model is asked for JSON (DESIGN §3:
 * it supports exactly the features listed) and its answer served as the client's stream — on the
 * translated route, the one that asks for JSON whatever the client's body says (`wholeStream`);
 * left out when translating would lose what the pass-through keeps (`lostInTranslation`).
 */
export function routesFor<View>(
  surface: ChatSurface<View>,
  decoded: Pick<Decoded<View>, 'view' | 'stream'>,
  headers: Headers,
  primary: Omit<Route<View>, 'target'>,
  resilience: Resilience,
  fallbacks: readonly CatalogueEntry[],
): Route<View>[] {
  const { entry } = primary
  const { view } = decoded
  const routes: Route<View>[] = [
    { ...primary, target: resilience.target(entry.provider, entry.model, entry.id) },
  ]
  for (const fb of fallbacks) {
    try {
      const whole = wholeStream(decoded.stream, fb)
      let forward = forwardFor(surface, fb)
      if (whole && forward) {
        if (forward.lostInTranslation?.(view, headers)) continue
        forward = undefined
      }
      const translated = checkAndTranslate(
        surface,
        view,
        fb,
        forward !== undefined,
        whole ? 'streaming' : undefined,
      )
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

/** A stream request to a model without `streaming`: its JSON answer serves the stream. */
export const wholeStream = (stream: boolean, entry: Pick<CatalogueEntry, 'model'>): boolean =>
  stream && !entry.model.features.includes('streaming')

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
