/**
 * @module
 * The output cap the limits set (charge.ts `applyReservation`), applied to every route's upstream
 * request: a translated request has its canonical cap set (`capRequest`); a pass-through body is
 * edited in its text, in the member its wire declares (`Forwarding.outputCap`) — no second parse
 * of a body as large as the client's.
 */
import { flatText } from '../../json/spliced.ts'
import type { ForwardCall } from '../../providers/types.ts'
import { capRequest } from '../output-cap.ts'
import type { Forwarding } from '../surface.ts'
import type { Route } from './chat-routes.ts'

/** Every route's upstream request with the output cap `n`: translated ones edited, pass-through ones wrapped. */
export function capRoutes<View>(
  routes: Route<View>[],
  n: number,
  /** The client sent no cap of its own: the body's text is edited (each route's model's maximum replaced). */
  absent: boolean,
): Route<View>[] {
  return routes.map((r) => {
    if (r.translated) capRequest(r.translated.request, n)
    const fwd = r.forward
    if (!fwd) return r
    const filled = absent ? (r.entry.model.max_output_tokens ?? null) : null
    // The member a body without a cap gets: the wire's, or the provider's own name for it.
    const field = fwd.outputCap.field(r.entry.provider)
    return {
      ...r,
      forward: {
        ...fwd,
        request: (view, entry, text, headers, ask) =>
          capForward(fwd.request(view, entry, text, headers, { ...ask, cap: n }), fwd, n, filled, field),
      },
    }
  })
}

/** A pass-through body with the output cap, in the wire's own field. */
function capForward<View>(
  call: ForwardCall,
  fwd: Forwarding<View>,
  n: number,
  /** The model's maximum output tokens when the client set no cap, else null. */
  absent: number | null,
  field: string,
): ForwardCall {
  // Capped in the forwarding's own edit of the body (chat: forwardBody's splice).
  if (call.capped) return call
  // Edited as one string (a large body's pieces joined): a capped body is a metered request's.
  const body = flatText(call.body)
  // The client set no cap: a body that carries the model's maximum in `field` has it replaced;
  // otherwise the member is added after the opening brace. Neither parses the body (a quoted key
  // cannot occur inside a JSON string).
  if (absent !== null && fwd.outputCap.fill) return { ...call, body: fwd.outputCap.fill(body, n) }
  if (absent !== null) {
    const filled = `"${field}":${absent}`
    const at = body.indexOf(filled)
    if (at >= 0)
      return {
        ...call,
        body: `${body.slice(0, at)}"${field}":${n}${body.slice(at + filled.length)}`,
      }
    const open = body.indexOf('{')
    if (
      open >= 0 &&
      !body
        .slice(open + 1)
        .trimStart()
        .startsWith('}')
    )
      return {
        ...call,
        body: `${body.slice(0, open + 1)}${filled.replace(String(absent), String(n))},${body.slice(open + 1)}`,
      }
  }
  const { clamp } = fwd.outputCap
  // A wire without `clamp` caps in `request` (ask.cap) and never reaches here.
  if (!clamp) throw new Error(`the ${fwd.kind} pass-through neither capped its request nor has a clamp`)
  return { ...call, body: clamp(body, n) }
}
