/**
 * An admission as the store takes it, for store-level tests of reservations: account, time and
 * charge vary, the rest is fixed (no request windows, no suspension).
 */
import type { ChargeRequest } from '../../src/limits/types.ts'
import type { AdmitInput } from '../../src/store/types.ts'
import { newRequestId } from '../../src/util/ids.ts'

export const chargedAdmission = (
  accountId: number,
  now: number,
  charge: ChargeRequest,
  keyId = 'key_1',
): AdmitInput => ({
  accountId,
  keyId,
  model: 'demo/echo',
  requestId: 'r',
  gatewayId: newRequestId(),
  stream: false,
  now,
  rpm: null,
  rpd: null,
  suspension: null,
  charge,
})
