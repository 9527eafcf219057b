/**
 * @module
 * Requests refused for what they contain count toward the key's suspension, like rate-limited ones
 * (`limits.suspension.count_invalid`), so a key cannot send invalid bodies forever: each one costs
 * the gateway a body read and a parse, and unlike a rate-limited request nothing else refuses it.
 */
import type { Auth } from '../auth/authenticate.ts'
import { rateLimitHeaders } from '../limits/index.ts'
import { rowHeaders } from '../limits/row-headers.ts'
import { GatewayError } from '../util/errors.ts'
import { chargeRows } from './charge.ts'
import type { PipelineDeps } from './deps.ts'
import type { SurfaceCore } from './surface.ts'

/**
 * A request refused before admission still carries the rate-limit headers every answer does
 * (DESIGN §5, §11), read without charging anything: the account's request windows and the token
 * and key rows' states, as `/v1/usage` reads them. A store that cannot be read leaves them out:
 * the refusal stands as it is.
 */
export async function refusalLimitHeaders(
  deps: PipelineDeps,
  auth: Auth,
  surface: Pick<SurfaceCore<unknown>, 'limitHeaders'>,
  headers: Record<string, string>,
): Promise<void> {
  const plan = auth.plan.plan!
  const rows = chargeRows(plan, auth.key.limits)
  if (plan.rpm == null && plan.rpd == null && rows.length === 0) return
  const now = deps.clock.now()
  const q = { accountId: auth.account.id, keyId: auth.key.id, now, rows }
  try {
    const [windows, states] = await Promise.all([
      deps.store.windows(auth.account.id, now, plan.rpm, plan.rpd),
      rows.length ? deps.store.rowStates(q) : undefined,
    ])
    Object.assign(headers, rateLimitHeaders(windows, states, now))
    if (states) rowHeaders(states, now, headers, true)
    surface.limitHeaders?.(windows, states, now, headers)
  } catch (e) {
    deps.log.warn('rate-limit headers left off a refusal: the store could not be read', {
      error: String((e as Error)?.message ?? e),
    })
  }
}

/**
 * Counts `err` against the key when it is a 4xx refusal, and returns it for the caller to throw.
 * Counting never changes the answer: a store failure here is logged, and the client still gets
 * its 4xx. A suspension starts with the next request (403 `key_suspended`).
 *
 * A count the store was busy or away for is not retried nor queued: it is lost, and logged. The
 * suspension is a threshold over a window ("persistent limit hits may lead to temporary
 * suspension", DESIGN §5), not a limit that must be exact like `rpm`: a key that keeps sending
 * invalid requests is counted again as soon as the store answers, so a busy spell only delays
 * its suspension by the counts it lost. A retry would hold each 4xx (the client waits for the
 * count) up to twice `database.busy_timeout_ms`, and add writes to a store that is already the
 * bottleneck, twice for every invalid request a flooding key sends; a queue would count late (on
 * PostgreSQL, at the engine's time of the write) and need a count per call in every limiter. The
 * refusal itself still reaches GET /admin/v1/refusals: the recorder keeps it until the store
 * takes it. (Rate-limit refusals are counted inside the admission itself, never separately.)
 *
 * @example
 * const decided = await decide(request).catch(async (e) => { throw await countInvalidRequest(deps, auth, e) })
 */
export async function countInvalidRequest(deps: PipelineDeps, auth: Auth, err: unknown): Promise<unknown> {
  if (!(err instanceof GatewayError) || err.status < 400 || err.status >= 500) return err
  // Per key and code, for the operator (GET /admin/v1/refusals), whatever the suspension policy.
  deps.recorder.recordRefusal({
    accountId: auth.account.id,
    keyId: auth.key.id,
    code: err.code,
    status: err.status,
    at: deps.clock.now(),
  })
  const policy = deps.config.suspension
  if (!policy.enabled || !policy.countInvalid) return err
  try {
    const until = await deps.store.countRejection({
      accountId: auth.account.id,
      keyId: auth.key.id,
      now: deps.clock.now(),
      suspension: policy,
    })
    if (until !== null) {
      deps.log.warn('key suspended after repeated invalid requests', {
        key: auth.key.prefix,
        account: auth.account.name,
        until: new Date(until).toISOString(),
        code: err.code,
      })
    }
  } catch (storeErr) {
    deps.log.error('could not count an invalid request toward suspension', {
      key: auth.key.prefix,
      error: String((storeErr as Error)?.message ?? storeErr),
    })
  }
  return err
}
