/**
 * @module
 * The steps every keyed request shares before its operation's part (run.ts): auth, the body read
 * and decoded, the model routed, its operation and the plan checked; and how a refusal among them
 * (or among the operation's checks) is counted.
 */
import { type Auth, authenticateNow } from '../auth/authenticate.ts'
import type { CatalogueEntry } from '../catalogue/entry.ts'
import { keyReaches } from '../catalogue/key-reach.ts'
import { type Allows, reachable, reaches } from '../catalogue/reach.ts'
import { notInPlan, planAllows } from '../catalogue/routing.ts'
import { modelNotAllowedError } from '../limits/refusals.ts'
import { checkModelServes } from '../operations/operation.ts'
import { clientRequestId, Exchange, pathOf, requestId, surfaceOf } from '../traffic/traffic.ts'
import type { SessionHash } from '../util/affinity.ts'
import { GatewayError } from '../util/errors.ts'
import { checkJsonContentType, readBodyText } from './body.ts'
import type { PipelineDeps } from './deps.ts'
import { countInvalidRequest, refusalLimitHeaders } from './invalid-requests.ts'
import type { LargeBodies } from './large-bodies.ts'
import { sessionOf } from './session.ts'
import type { Decoded, SurfaceCore } from './surface.ts'

/**
 * The steps every keyed request shares, also for requests that are not admitted (count_tokens):
 * auth (401/403) → the path's method (404, Gemini's) → content type and size (415/413) → decode
 * (400) → route (400/404: a model, an
 * alias, a pattern) → the model answers the operation (400 naming `model`) → plan and key (403).
 * `members`: the models that may answer, in the order to try (a virtual model's pick first);
 * those that cannot answer the operation or that the plan or key does not reach are left out.
 */
export async function prepare<View>(
  deps: PipelineDeps,
  largeBodies: LargeBodies,
  surface: SurfaceCore<View>,
  admitted: boolean,
  request: Request,
  headers: Record<string, string>,
  ex: Exchange,
  largeBody: { counted: number },
): Promise<{
  auth: Auth
  text: string
  decoded: Decoded<View>
  members: CatalogueEntry[]
  /** The request's agent session (session.ts): a virtual model's target and a pool's key stay its. */
  session: SessionHash | null
}> {
  // A cached key is answered without a promise (authenticateNow).
  const authed = authenticateNow(deps, surface.credential(request.headers, request.url))
  const auth = authed instanceof Promise ? await authed : authed
  ex.account = auth.account.name
  ex.keyPrefix = auth.key.prefix
  try {
    surface.checkRoute?.(request.url)
    checkJsonContentType(request)
    largeBodies.reading()
    const text = await readBodyText(
      request,
      deps.config.server.bodyLimitBytes,
      deps.config.server.bodyTimeoutMs,
      surface.jsonLimits,
      deps.traffic.stopSignal,
    )
    largeBody.counted = largeBodies.read(text.length)
    // readBodyText held the text to the JSON structural limits while reading it.
    const decoded = decodeNamingModel(deps, surface, text, request.url, ex)
    const session = sessionOf(request.headers, decoded.session)
    const plan = auth.plan.plan!.models
    const byPlan: Allows = (id, tier) => planAllows(plan, id, { tier })
    const keyList = auth.key.limits?.models
    // Only a key with a model list has a second filter (an arrow is a new function each request).
    const byKeyList: Allows | null = keyList ? (id, tier) => keyReaches(keyList, id, tier) : null
    // A virtual model picks among the members this request may use (none other takes a turn).
    const routed = deps.catalogue.route(
      decoded.model,
      session,
      (alias, m) =>
        serves(m, surface.operation) &&
        reaches(alias, m, byPlan) &&
        (!byKeyList || reaches(alias, m, byKeyList)),
    )
    const first = routed.members[0]!
    ex.model = first.id
    ex.stream = decoded.stream
    // A pool's member of the other type is skipped; with none left, the first one's refusal.
    routed.members = servingOnly(routed.members, surface.operation)
    if (!routed.members.length) checkModelServes(first.model, surface.operation, first.id)
    const inPlan = reachable(routed, byPlan)
    if (!inPlan.length) throw notInPlan(routed.named, auth.plan.name)
    // Without a key list every model in the plan is the key's: no second list, no copy.
    const byKey = byKeyList ? reachable(routed, byKeyList) : null
    const members = byKey ? inPlan.filter((m) => byKey.includes(m)) : inPlan
    if (!members.length) throw modelNotAllowedError(routed.named, [...keyList!])
    return { auth, text, decoded, members, session }
  } catch (e) {
    throw await refusedBefore(deps, admitted, auth, headers, e, surface)
  }
}

/**
 * `surface.decode`; when it refuses the body, the model the body names still labels the exchange
 * (its metrics and access line), if the catalogue knows it: a refusal of what else the body holds
 * is counted under its model, as one after routing is, and no label takes a made-up name.
 */
function decodeNamingModel<View>(
  deps: PipelineDeps,
  surface: SurfaceCore<View>,
  text: string,
  url: string,
  ex: Exchange,
): Decoded<View> {
  let named: unknown
  try {
    return surface.decode(text, true, url, (model) => {
      named = model
    })
  } catch (e) {
    if (typeof named === 'string' && deps.catalogue.model(named)) ex.model = named
    throw e
  }
}

/** The members that serve `operation`, in order; the same array when all do (the usual case). */
function servingOnly(
  members: CatalogueEntry[],
  operation: Parameters<typeof checkModelServes>[1],
): CatalogueEntry[] {
  for (let i = 0; i < members.length; i++) {
    if (!serves(members[i]!, operation)) return members.filter((m) => serves(m, operation))
  }
  return members
}

function serves(entry: CatalogueEntry, operation: Parameters<typeof checkModelServes>[1]): boolean {
  try {
    checkModelServes(entry.model, operation, entry.id)
    return true
  } catch {
    return false
  }
}

/**
 * A refusal after authentication and before admission (400, 403, 404, 413, 415): counted toward
 * the key's suspension, with the rate-limit headers an admitted answer would carry (not on
 * count_tokens, which is never admitted). Returns it for the caller to throw.
 */
export async function refusedBefore(
  deps: PipelineDeps,
  admitted: boolean,
  auth: Auth,
  headers: Record<string, string>,
  e: unknown,
  surface: Pick<SurfaceCore<unknown>, 'limitHeaders'>,
): Promise<unknown> {
  const err = await countInvalidRequest(deps, auth, e)
  if (err instanceof GatewayError && err.status < 500 && admitted)
    await refusalLimitHeaders(deps, auth, surface, headers)
  return err
}

/**
 * What the access log and the request metrics say about this request; for a request run without
 * the app (the pipeline called directly), an exchange no traffic tracks.
 */
export function exchangeOf(deps: PipelineDeps, request: Request, headers: Record<string, string>): Exchange {
  const tracked = deps.traffic.of(request)
  if (tracked) return tracked
  const echoed = String(headers['x-request-id'])
  const clientId = clientRequestId(request, echoed)
  return new Exchange(
    requestId(echoed, clientId),
    surfaceOf(pathOf(request.url)),
    request.method,
    '',
    clientId,
  )
}
