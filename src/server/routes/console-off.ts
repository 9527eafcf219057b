/**
 * @module
 * `GET /console` while the operator console is off (no admin token): a 404 that says so and how
 * to turn it on, instead of the generic "Unknown route" that left a newcomer guessing. The start
 * line says the same (`consoleNote`).
 */
import { Elysia } from 'elysia'
import { GatewayError } from '../../util/errors.ts'
import type { Deps } from '../deps.ts'

const TURN_ON =
  'set admin.token in the config (32+ characters, e.g. `openssl rand -hex 32`; the starter config reads SWITCHYARD_ADMIN_TOKEN) and restart'

/** What the start line says about the console: where it is, or that it is off and how to turn it on. */
export function consoleNote(adminToken: string | null, url: string): string {
  return adminToken === null ? `console off: ${TURN_ON}` : `console ${url}/console`
}

export function consoleOffRoutes(deps: Deps) {
  const app = new Elysia({ name: 'switchyard.console-off' })
  if (deps.config.admin.token !== null) return app
  return app.get('/console', () => {
    throw new GatewayError(404, 'console_off', `The operator console is off: ${TURN_ON}; then open /console.`)
  })
}
