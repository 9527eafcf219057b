/**
 * @module
 * `GET /console` while the operator console is off (no admin token): a 404 that says so and how
 * to turn it on, instead of the generic "Unknown route" that left a newcomer guessing. The start
 * line says the same (`consoleNote`).
 */
import { Elysia } from 'elysia'
import { GatewayError } from '../../util/errors.ts'
import type { Deps } from '../deps.ts'

/**
 * A live reload reads the token (DESIGN §13: the admin token is no start-only setting): SIGHUP, or
 * `switchyard reload`, which proves itself with the serve file's credential, not the admin token.
 * A `${VAR}` keeps the value the process started with, so the starter config's variable needs a
 * restart. No pid here: with `--workers N` a SIGHUP to a worker reloads that worker only.
 */
const TURN_ON =
  'write admin.token into the config file (32+ characters, e.g. `openssl rand -hex 32`), then run `switchyard reload` (or send the `switchyard serve` process you started SIGHUP: `kill -HUP PID`, `systemctl reload`): the live reload turns it on. The starter config reads it from SWITCHYARD_ADMIN_TOKEN instead, a variable a running gateway never sees change: export it and restart'

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
