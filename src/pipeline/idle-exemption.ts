/**
 * @module
 * Lifts Bun's socket idle timeout for one request and puts it back when that request ends.
 * Bun's `server.timeout(request, s)` sets the timeout of the socket, not of the request, so an
 * exemption that is never undone outlives the request and a pooled keep-alive connection then
 * never times out.
 *
 * @example
 * const restore = exemptFromIdleTimeout(server, request, config.server.idleTimeoutS)
 * try { return await longUpstreamCall() } finally { restore() }
 */
import type { Server } from 'bun'

/**
 * Returns the function that restores `idleTimeoutS` (or sets `seconds`, e.g. a short one for a
 * socket whose client stopped reading); calling it more than once is harmless.
 */
export function exemptFromIdleTimeout(
  server: Pick<Server<unknown>, 'timeout'> | null | undefined,
  request: Request,
  idleTimeoutS: number,
): (seconds?: number) => void {
  if (!server) return () => {}
  server.timeout(request, 0)
  let restored = false
  return (seconds = idleTimeoutS) => {
    if (restored) return
    restored = true
    try {
      server.timeout(request, seconds)
    } catch {
      // The socket is already gone (client disconnected): nothing to restore.
    }
  }
}
