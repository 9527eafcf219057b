/**
 * @module
 * Splits a base64 `data:` URL into media type and payload, the shape every provider wants
 * for inline images and files, and tells inline images from remote ones.
 */
import { GatewayError } from '../../util/errors.ts'

export interface InlineData {
  mediaType: string
  data: string
}

/**
 * `data:image/png;base64,iVBOR…` → `{ mediaType: 'image/png', data: 'iVBOR…' }`; anything else →
 * `null` (not a data URL, or not base64 — providers accept base64 only).
 *
 * @example
 * parseDataUrl('data:image/png;base64,AAAA') // { mediaType: 'image/png', data: 'AAAA' }
 */
export function parseDataUrl(url: string): InlineData | null {
  const match = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/is.exec(url)
  if (!match) return null
  return { mediaType: match[1]!.toLowerCase(), data: match[3]! }
}

/**
 * An OpenAI `image_url.url`: an http(s) URL the provider fetches itself (`{ url }`), or a base64
 * data URL (`InlineData`). Anything else is the client's mistake → 400 `invalid_image_url` naming `param`.
 *
 * @example
 * parseImageUrl('https://x.test/cat.png', 'messages[0].content[1].image_url.url') // { url: 'https://x.test/cat.png' }
 * parseImageUrl('data:image/png;base64,AAAA', 'messages[0].content[1].image_url.url') // { mediaType: 'image/png', data: 'AAAA' }
 */
export function parseImageUrl(url: string, param: string): { url: string } | InlineData {
  if (/^https?:\/\//i.test(url)) return { url }
  const inline = parseDataUrl(url)
  if (!inline) {
    throw new GatewayError(
      400,
      'invalid_image_url',
      `${param} must be an http(s) URL or a base64 data URL (data:image/png;base64,...).`,
      { param },
    )
  }
  return inline
}
