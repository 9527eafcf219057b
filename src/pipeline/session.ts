/**
 * @module
 * The agent session a request belongs to, for session affinity (DESIGN §14; the pool side is
 * util/affinity.ts). What each agent really sends, read from its own traffic:
 * - Claude Code: `x-claude-code-session-id: <uuid>` on every request (and the same id inside
 *   `metadata.user_id`, a JSON string `{"device_id", "account_uuid", "session_id"}`).
 * - Codex (0.169): `session-id: <uuid>` and `thread-id` headers, and the same id as the body's
 *   `prompt_cache_key`; older Codex sent `session_id` and `conversation_id` headers.
 * - Gemini CLI (0.61, API-key auth): no session id at all; its `x-gemini-api-privileged-user-id` is
 *   the installation's id, which keeps one installation's sessions on one key (they share their long
 *   system prompt and tool list, so that is where their cache is).
 * - OpenAI clients: `prompt_cache_key`, the body's own cache key (chat and Responses).
 * The surface reads its body's field (`Decoded.session`); the headers are read here, the same for
 * every surface. Only a hash of the id is kept (`sessionHash`): the id may be a secret.
 *
 * @example
 * const session = sessionOf(request.headers, decoded.session)   // a hash, or null: no affinity
 */
import { type SessionHash, sessionHash } from '../util/affinity.ts'

/** Headers that carry a session id, the most specific first. */
const SESSION_HEADERS = [
  'x-claude-code-session-id',
  'session-id',
  'session_id',
  'conversation_id',
  'x-gemini-api-privileged-user-id',
] as const

/** The request's session: the body's cache key or session id first, else the first header that has one. */
export function sessionOf(headers: Headers, fromBody: string | null | undefined): SessionHash | null {
  if (fromBody) return sessionHash(fromBody)
  for (const name of SESSION_HEADERS) {
    const id = headers.get(name)
    if (id) return sessionHash(id)
  }
  return null
}
