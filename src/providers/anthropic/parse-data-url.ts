/**
 * @module
 * Splits a base64 `data:` URL into media type and payload, the shape every provider wants
 * for inline images and files.
 */

/**
 * `data:image/png;base64,iVBOR…` → `{ mediaType: 'image/png', data: 'iVBOR…' }`; anything else →
 * `null` (not a data URL, or not base64 — providers accept base64 only).
 *
 * @example
 * parseDataUrl('data:image/png;base64,AAAA') // { mediaType: 'image/png', data: 'AAAA' }
 */
export function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  const match = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/is.exec(url)
  if (!match) return null
  return { mediaType: match[1]!.toLowerCase(), data: match[3]! }
}
