/**
 * @module
 * What a Switchyard API key looks like, down here so the logger can keep one out of every line:
 * a key pasted where its id belongs (`keys revoke sk-sy-…`, `/admin/v1/keys/sk-sy-…/revoke`)
 * travelled into the access line's path and the audit line's target.
 *
 * @example maskKeys('/admin/v1/keys/sk-sy-AbCdEf0123…/revoke') // '/admin/v1/keys/sk-sy-AbCdEf…/revoke'
 */

export const KEY_PREFIX = 'sk-sy-'
/** `sk-sy-` plus this many secret characters are shown in listings and logs. */
export const DISPLAY_CHARS = 6

/** A key anywhere in a text: the prefix and at least 32 base62 characters (keys have 40). */
const KEY_IN_TEXT = /sk-sy-([0-9A-Za-z]{6})[0-9A-Za-z]{26,}/g

/** Whether `text` holds a key (the prefix and at least 32 base62 characters). */
export function holdsKey(text: string): boolean {
  if (!text.includes(KEY_PREFIX)) return false
  KEY_IN_TEXT.lastIndex = 0
  return KEY_IN_TEXT.test(text)
}

/** `text` with every key in it cut to its display prefix and an ellipsis. */
export function maskKeys(text: string): string {
  return text.includes(KEY_PREFIX) ? text.replace(KEY_IN_TEXT, `${KEY_PREFIX}$1…`) : text
}

/**
 * A provider's key a client may paste where a model id or a name belongs: OpenAI's `sk-…`
 * (`sk-proj-…`, `sk-svcacct-…`), Anthropic's `sk-ant-…`, Google's `AIza…`, with 20 characters or
 * more after the prefix. At a word's start only (`task-…`, `risk-…` model names are not keys);
 * any case, since a Host name arrives lower-cased.
 */
const PROVIDER_KEY_IN_TEXT = /\b(sk-|AIza)[0-9A-Za-z_-]{20,}/gi
const MAY_HOLD_PROVIDER_KEY = /sk-|aiza/i

/** `text` with every provider key in it cut to its prefix (`sk-…`, `AIza…`). */
export function maskProviderKeys(text: string): string {
  return MAY_HOLD_PROVIDER_KEY.test(text) ? text.replace(PROVIDER_KEY_IN_TEXT, '$1…') : text
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750: one or more spaces), or null. */
export function bearerToken(header: string | null | undefined): string | null {
  return header ? (/^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] ?? null) : null
}
