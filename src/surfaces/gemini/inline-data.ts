/**
 * @module
 * An `inlineData.data` that is not base64 is refused as Gemini refuses it — 400 INVALID_ARGUMENT
 * naming the field ("Invalid value at 'contents[0].parts[2].inline_data.data' (TYPE_BYTES), Base64
 * decoding failed for ...") — by `:generateContent`, `:streamGenerateContent` and `:countTokens`
 * alike, before admission, on every route: a translated one would otherwise count its text as
 * input and send a broken image on, and a count would answer for bytes no model can read.
 * Decodable means protobuf's JSON mapping of `bytes`: the standard or URL-safe alphabet, with or
 * without padding.
 *
 * @example
 * refuseUndecodableInlineData({ contents: [{ parts: [{ inlineData: { mimeType: 'image/png', data: 'https://x' } }] }] })
 * // throws 400 param 'contents[0].parts[0].inlineData.data'
 */
import { GatewayError } from '../../util/errors.ts'
import type { GeminiContentIn, GenerateContentRequest } from './request-schema.ts'

/** Base64's characters (standard and URL-safe), then at most two `=` of padding. Linear, no backtracking. */
const ALPHABET = /^[A-Za-z0-9+/_-]*={0,2}$/

/** Whether protobuf's JSON parser decodes `data` as bytes. */
export function isBase64(data: string): boolean {
  if (!ALPHABET.test(data)) return false
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0
  // Four characters carry three bytes; a lone character in the last group carries none.
  if ((data.length - padding) % 4 === 1) return false
  return padding === 0 || data.length % 4 === 0
}

/** Throws the 400 for the first `inlineData.data` in `contents` or `systemInstruction` that is not base64. */
export function refuseUndecodableInlineData(request: GenerateContentRequest, prefix = ''): void {
  const contents = request.contents ?? []
  for (let i = 0; i < contents.length; i++) checkContent(contents[i]!, `${prefix}contents[${i}]`)
  if (request.systemInstruction) checkContent(request.systemInstruction, `${prefix}systemInstruction`)
}

function checkContent(content: GeminiContentIn, at: string): void {
  for (let j = 0; j < content.parts.length; j++) {
    const data = content.parts[j]!.inlineData?.data
    if (data === undefined || isBase64(data)) continue
    const param = `${at}.parts[${j}].inlineData.data`
    throw new GatewayError(
      400,
      'invalid_value',
      `Invalid value at '${param}' (TYPE_BYTES), Base64 decoding failed: send the file's bytes as base64 (standard or URL-safe alphabet), not a URL or text; a file by URL goes in fileData.fileUri.`,
      { param },
    )
  }
}
