/**
 * @module
 * The session id or cache key a body carries, for session affinity (pipeline/session.ts says what
 * each agent sends). Only strings count; anything else is no session.
 *
 * @example
 * cacheKeyOf({ prompt_cache_key: 'c1' })            // 'c1'
 * sessionOfUser('{"device_id":"d","session_id":"s"}')   // 's' (Claude Code's metadata.user_id)
 */

/** OpenAI's `prompt_cache_key` (chat and Responses bodies; Codex sends its session id there). */
export function cacheKeyOf(body: object): string | null {
  const key = (body as { prompt_cache_key?: unknown }).prompt_cache_key
  return typeof key === 'string' && key !== '' ? key : null
}

/**
 * Messages' `metadata.user_id`: Claude Code's is a JSON string whose `session_id` is the session
 * (older versions: `user_<hash>_account_<uuid>_session_<uuid>`); any other value is the end user's
 * id, which keeps that user's requests together.
 */
export function sessionOfUser(userId: string | null | undefined): string | null {
  if (!userId) return null
  if (userId.startsWith('{')) {
    try {
      const parsed = JSON.parse(userId) as { session_id?: unknown }
      if (typeof parsed.session_id === 'string' && parsed.session_id !== '') return parsed.session_id
    } catch {
      // Not JSON after all: the whole value is the id.
    }
    return userId
  }
  const at = userId.lastIndexOf('_session_')
  return at >= 0 ? userId.slice(at + '_session_'.length) : userId
}
