/**
 * @module
 * Audit lines: one per administrative action, from the admin API or the command line, and one
 * per refused admin credential. A line says who acted, what was attempted, on what, and how it
 * ended; it never holds a token or a key (callers pass none).
 *
 * Written through the ordinary logger as `{"msg":"audit", actor, action, target, outcome, ...}`:
 * `info` when the outcome is `ok`, `warn` otherwise.
 *
 * @example
 * audit(log, { actor: 'cli', action: 'keys revoke', target: 'key_3f2a', change: { state: 'revoked' }, outcome: 'ok' })
 * audit(log, { actor: 'unauthenticated', action: 'GET /admin/v1/accounts', target: '/admin/v1/accounts',
 *   outcome: 'invalid_admin_token', status: 401, request_id: 'req_…', client: '10.0.0.7' })
 */
import type { Logger } from './log.ts'

/**
 * `unauthenticated`: a caller whose admin credential was refused (or who sent none); `signal`:
 * whoever may signal the process (SIGHUP's live reload); `serve_file`: whoever may read the serve
 * file (`switchyard reload`, cli/serve-file.ts).
 */
export type AuditActor =
  | 'admin_token'
  | 'console_session'
  | 'cli'
  | 'signal'
  | 'serve_file'
  | 'unauthenticated'

export interface AuditEvent {
  actor: AuditActor
  /** What was attempted: the route (`POST /admin/v1/keys/:id/revoke`) or the command (`keys revoke`). */
  action: string
  /** What it was done to: the request path with its ids, or the account / key named. */
  target: string
  /** What the change set (`{plan, days}`, a new key's id and limits): never a secret. */
  change?: Record<string, unknown>
  /** `ok`, or the error code it ended with. */
  outcome: string
  /** HTTP status, for the admin API. */
  status?: number
  request_id?: string
  /** The client's own x-request-id, when it sent one (`request_id` is the gateway's). */
  client_request_id?: string
  /** The caller's address, for the admin API. */
  client?: string
}

export function audit(log: Logger, event: AuditEvent): void {
  if (event.outcome === 'ok') log.info('audit', { ...event })
  else log.warn('audit', { ...event })
}
