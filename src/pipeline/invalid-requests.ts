/**
 * @module
 * Requests refused for what they contain count toward the key's suspension, like rate-limited ones
 * (`limits.suspension.count_invalid`), so a key cannot send invalid bodies forever: each one costs
 * the gateway a body read and a parse, and unlike a rate-limited request nothing else refuses it.
 */
import type { Auth } from '../auth/authenticate.ts'
import { GatewayError } from '../util/errors.ts'
import type { PipelineDeps } from './deps.ts'

/**
 * Counts `err` against the key when it is a 4xx refusal, and returns it for the caller to throw.
 * Counting never changes the answer: a store failure here is logged, and the client still gets
 * its 4xx. A suspension starts with the next request (403 `key_suspended`).
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
