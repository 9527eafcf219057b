/**
 * @module
 * Gemini's `fileData` needs a MIME type that an OpenAI `image_url` does not carry.
 */

const MIME_BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
}

/**
 * From the URL path's extension; `image/jpeg` when there is none or it is unknown, since the
 * URL came in an image part.
 *
 * @example
 * guessImageMimeType('https://x.test/cat.PNG?size=2') // 'image/png'
 */
export function guessImageMimeType(url: string): string {
  let path = url
  try {
    path = new URL(url).pathname
  } catch {
    // not absolute: use as is
  }
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase()
  return (ext && MIME_BY_EXTENSION[ext]) || 'image/jpeg'
}
