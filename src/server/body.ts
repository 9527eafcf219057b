/**
 * @module
 * Reading a JSON request body with the gateway's own checks: content type (415) and size (413),
 * enforced while reading so a chunked upload without Content-Length cannot exceed the limit.
 */
import { GatewayError } from '../util/errors.ts'

export function tooLarge(limit: number): GatewayError {
  return new GatewayError(
    413,
    'request_too_large',
    `Request body is larger than the ${limit}-byte limit; send less (e.g. smaller images).`,
  )
}

export function checkJsonContentType(request: Request): void {
  const ct = request.headers.get('content-type')
  // A missing Content-Type is read as JSON (some clients omit it); a different one is refused.
  if (ct && !/^application\/([\w.+-]*\+)?json\b/i.test(ct.trim())) {
    throw new GatewayError(
      415,
      'unsupported_media_type',
      `Content-Type '${ct.slice(0, 100)}' is not supported; send the body as JSON with Content-Type: application/json.`,
    )
  }
}

export async function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? '')
  if (declared > limit) throw tooLarge(limit)
  if (!request.body) return ''
  if (declared > 0) {
    const text = await request.text()
    if (text.length > limit) throw tooLarge(limit)
    return text
  }
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > limit) throw tooLarge(limit)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}
