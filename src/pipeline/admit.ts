/**
 * @module
 * Admission, once per request whatever the operation (DESIGN §11): the account's request windows
 * and the charge's rows reserved together, the rate-limit headers set from what they say, and a
 * refusal (429, or 402 for a budget) counted, recorded and thrown in their words.
 *
 * @example
 * let admit = await store.admit(admission(req, charge, now, charge ? null : suspension))
 * const limitHeaders = limitHeadersOf(req, admit, now)
 * if (!admit.admitted) throw await refusalOf(req, admit, charge, now, limitHeaders, charge ? suspension : null)
 */
import { admitStates, rateLimitError, rateLimitHeaders } from '../limits/index.ts'
import { retriesSoon } from '../limits/refusals.ts'
import type { AdmitInput, AdmitResult, ChargeRequest, SuspensionPolicy } from '../limits/types.ts'
import type { GatewayError } from '../util/errors.ts'
import { chargeRefusalError } from './charge.ts'
import type { Prepared } from './operation.ts'

/** The limiter's input for `req` at `at`: the account's windows, the key's, and the charge's rows. */
export function admission(
  req: Prepared<unknown>,
  charge: ChargeRequest | undefined,
  at: number,
  suspension: SuspensionPolicy | null,
): AdmitInput {
  const { auth } = req
  const plan = auth.plan.plan!
  return {
    accountId: auth.account.id,
    keyId: auth.key.id,
    model: req.entry.id,
    requestId: String(req.headers['x-request-id']),
    gatewayId: req.requestId,
    surface: req.surface.name,
    stream: req.decoded.stream,
    now: at,
    rpm: plan.rpm,
    rpd: plan.rpd,
    suspension,
    charge,
  }
}

/**
 * A refusal while requests of this account that ended here may still count at their whole
 * reservation (their settlements wait for the usage flush): a charge refused is tried once more
 * after the flush. A request window's refusal is not the flush's to change. A charged request is
 * admitted without counting its refusal toward a suspension: `refusalOf` counts it once its
 * reason is known.
 */
export async function readmit(
  req: Prepared<unknown>,
  refused: Extract<AdmitResult, { admitted: false }>,
  charge: ChargeRequest | undefined,
  now: number,
): Promise<{ admit: AdmitResult; now: number }> {
  if (!refused.charge) return { admit: refused, now }
  await req.deps.recorder.flush()
  const at = req.deps.clock.now()
  return { admit: await req.deps.store.admit(admission(req, charge, at, null)), now: at }
}

/** The rate-limit headers of an admission at `now`, added to the response's (and returned). */
export function limitHeadersOf(
  req: Prepared<unknown>,
  admit: AdmitResult,
  now: number,
): Record<string, string> {
  const states = admitStates(admit)
  const limitHeaders = rateLimitHeaders(admit, states, now)
  req.surface.limitHeaders?.(admit, states, now, limitHeaders)
  Object.assign(req.headers, limitHeaders)
  return limitHeaders
}

/**
 * A refused admission (429, or 402 for a budget), counted and recorded: the error to throw.
 * `suspension`: the policy when the admission left the refusal's count toward a suspension to
 * this (a charged request's): counted unless the refusal asks for a retry within seconds — holds
 * of requests still in flight stood in the way, not the key's use (DESIGN §5: suspension is for a
 * key that keeps hitting its limits).
 */
export async function refusalOf(
  req: Prepared<unknown>,
  admit: Extract<AdmitResult, { admitted: false }>,
  charge: ChargeRequest | undefined,
  now: number,
  limitHeaders: Record<string, string>,
  suspension: SuspensionPolicy | null = null,
): Promise<GatewayError> {
  const { deps, auth, entry, headers, surface } = req
  const { store, metrics } = deps
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
  const counted = async () => {
    if (suspension)
      admit.suspendedUntil = await store.countRejection({
        accountId: auth.account.id,
        keyId: auth.key.id,
        now,
        suspension,
      })
  }
  let refused: GatewayError
  if (admit.charge) {
    refused = await chargeRefusalError(
      admit.charge,
      charge!,
      (rows) => store.rowStates({ accountId: auth.account.id, keyId: auth.key.id, now, rows }),
      now,
      headers,
    )
    if (!retriesSoon(refused)) await counted()
  } else {
    await counted()
    refused = rateLimitError(admit, now, limitHeaders)
  }
  deps.recorder.recordRefusal({
    accountId: auth.account.id,
    keyId: auth.key.id,
    code: refused.code,
    status: refused.status,
    at: now,
  })
  return refused
}
