/**
 * @module
 * CORS for browser apps: origins listed in `server.cors_origins` (`*` = any) get
 * `access-control-allow-origin` on every response and a 204 to their preflight; the rate-limit
 * and retry headers (requests and tokens, OpenAI's and Anthropic's names) and the gateway's own
 * `x-switchyard-*` headers are exposed, so a browser client can back off and read them. A preflight from any other
 * origin is refused (403); with no origins configured there is no CORS at all (the default).
 * No credentials: API keys travel in `Authorization`, never in cookies.
 */
import { GatewayError } from '../util/errors.ts'
import { clip } from '../util/text.ts'

const limitHeaders = (resource: string) =>
  ['limit', 'remaining', 'reset'].flatMap((m) => [
    `x-ratelimit-${m}-${resource}`,
    `x-ratelimit-${m}-${resource}-day`,
    `anthropic-ratelimit-${resource}-${m}`,
  ])

/** Every header of the gateway's own a browser client may act on (DESIGN §5, §10, §11). */
const EXPOSED = [
  'x-request-id',
  // Anthropic's name for it, on the Messages surface.
  'request-id',
  'retry-after',
  'retry-after-ms',
  // false when the wait is longer than a client should sleep through (util/errors.ts).
  'x-should-retry',
  ...limitHeaders('requests'),
  ...limitHeaders('tokens'),
  // How many upstream attempts the answer took (DESIGN §10).
  'x-switchyard-attempts',
  // The output allowance sent upstream and why (DESIGN §11).
  'x-switchyard-max-tokens',
  'x-switchyard-max-tokens-reason',
  'x-switchyard-dropped-tools',
  'x-switchyard-dropped-params',
  'x-switchyard-token-count',
  'x-switchyard-error-code',
].join(', ')

const MAX_AGE_S = '600'

export interface Cors {
  /**
   * Sets the CORS headers a response to `request` carries. Returns a response when the request
   * is a preflight (answered here, before auth: browsers never send credentials on one).
   */
  apply(request: Request, headers: Record<string, string | number>): Response | undefined
}

export function createCors(origins: readonly string[]): Cors | null {
  if (origins.length === 0) return null
  const any = origins.includes('*')
  const allowed = new Set(origins.map((o) => o.toLowerCase()))
  return {
    apply(request, headers) {
      const origin = request.headers.get('origin')
      const preflight =
        request.method === 'OPTIONS' && request.headers.get('access-control-request-method') !== null
      if (origin === null) return undefined
      headers.vary = 'origin'
      if (!any && !allowed.has(origin.toLowerCase())) {
        if (!preflight) return undefined
        throw new GatewayError(
          403,
          'cors_origin_not_allowed',
          `Origin ${clip(origin)} may not call this gateway; the operator can add it to server.cors_origins.`,
          { type: 'permission_error' },
        )
      }
      headers['access-control-allow-origin'] = any ? '*' : origin
      headers['access-control-expose-headers'] = EXPOSED
      if (!preflight) return undefined
      const asked = request.headers.get('access-control-request-headers')
      return new Response(null, {
        status: 204,
        headers: {
          ...(headers as Record<string, string>),
          'access-control-allow-methods': 'GET, POST, OPTIONS',
          'access-control-allow-headers': asked ?? 'authorization, content-type',
          'access-control-max-age': MAX_AGE_S,
        },
      })
    },
  }
}
