/**
 * @module
 * The count_tokens operation: never admitted. After the steps every keyed request shares (auth,
 * body, route, the model's operation, plan) its surface's own throttle applies, then the surface
 * counts — upstream through the adapter, or by the gateway (surfaces/count-tokens.ts). No limits
 * spent, no usage recorded.
 */
import type { UnadmittedOperation } from '../operation.ts'
import type { CountTokensSurface } from '../surface.ts'

export const countTokensOperation: UnadmittedOperation<unknown, CountTokensSurface<unknown>> = {
  admitted: false,
  answer(p) {
    p.surface.throttle(p.auth.key.id)
    const { decoded, entry, adapter, request, headers } = p
    return p.surface.count(
      decoded.view,
      entry,
      adapter,
      p.calls.callContext(entry, request.signal, p.requestId),
      request,
      headers,
    )
  },
}
