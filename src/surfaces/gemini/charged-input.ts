/**
 * @module
 * What the charge reads of a Gemini request (DESIGN §11): its contents and system prompt for the
 * input bound (limits/estimate-tokens.ts), the output cap and the candidates. Parts are put in the
 * bound's own vocabulary, as the chat surface's are:
 *
 * | part                                                      | counted as                                   |
 * |-----------------------------------------------------------|----------------------------------------------|
 * | `inlineData` image, `fileData` image (or an http(s) URI without a type) | an image (`IMAGE_TOKENS`; its bytes are not text) |
 * | `inlineData` audio                                        | its bytes as text (as chat's `input_audio`)   |
 * | `inlineData` other (PDF, video, text, …)                  | a file (`FILE_TOKENS` + its bytes as text)    |
 * | `fileData` PDF or text by URI                             | a file (`FILE_TOKENS`, as chat's `file_id`)    |
 * | `fileData` audio, video or another type by URI; `cachedContent` | cannot be counted: the gateway never sees their length (an hour of video bills about a million tokens), so under a token or money limit the request is refused naming the field (`UNCOUNTED_INPUT`) |
 *
 * A body with no `inlineData` or `fileData` part is read as it is (no copy on the hot path).
 *
 * @example
 * chargedInput({ contents: [{ parts: [{ fileData: { mimeType: 'video/mp4', fileUri: 'gs://b/v' } }] }] })[UNCOUNTED_INPUT]
 * // 'contents[0].parts[0].fileData'
 */
import { UNCOUNTED_INPUT } from '../../limits/estimate-tokens.ts'
import type { GeminiContentIn, GeminiPartIn, GenerateContentRequest } from './request-schema.ts'

/** Files by URI whose length bounds their tokens closely enough to count them as a document. */
const COUNTED_FILE = /^(application\/pdf|text\/)/

/** The first field whose input cannot be counted, or null. */
function uncountedOf(body: GenerateContentRequest): string | null {
  if (body.cachedContent !== undefined) return 'cachedContent'
  const scan = (content: GeminiContentIn | undefined, at: string): string | null => {
    const parts = content?.parts ?? []
    for (let j = 0; j < parts.length; j++) {
      const file = parts[j]!.fileData
      if (file && partAs(parts[j]!) === null) return `${at}.parts[${j}].fileData`
    }
    return null
  }
  for (let i = 0; i < body.contents.length; i++) {
    const found = scan(body.contents[i], `contents[${i}]`)
    if (found) return found
  }
  return scan(body.systemInstruction, 'systemInstruction')
}

/** A media part in the bound's vocabulary; null: a file by URI that cannot be counted. */
function partAs(part: GeminiPartIn): unknown {
  if (part.inlineData) {
    const type = part.inlineData.mimeType.toLowerCase()
    if (type.startsWith('image/')) return { type: 'image' }
    if (type.startsWith('audio/')) return part.inlineData.data
    return { type: 'file', data: part.inlineData.data }
  }
  const file = part.fileData!
  const type = file.mimeType?.toLowerCase() ?? ''
  if (type.startsWith('image/') || (type === '' && /^https?:\/\//.test(file.fileUri)))
    return { type: 'image' }
  return COUNTED_FILE.test(type) ? { type: 'file', uri: file.fileUri } : null
}

const hasMedia = (content: GeminiContentIn | undefined): boolean =>
  content?.parts.some((p) => p.inlineData !== undefined || p.fileData !== undefined) === true

/** A content with its media parts as the bound counts them (unchanged when it has none). */
function counted(content: GeminiContentIn | undefined): unknown {
  if (!content || !hasMedia(content)) return content
  return {
    role: content.role,
    parts: content.parts.map((p) => (p.inlineData || p.fileData ? (partAs(p) ?? p.fileData) : p)),
  }
}

/** The body the charge reads (see the module's table). */
export function chargedInput(body: GenerateContentRequest): Record<string | symbol, unknown> {
  const media = body.contents.some(hasMedia) || hasMedia(body.systemInstruction)
  const charged: Record<string | symbol, unknown> = {
    contents: media ? body.contents.map(counted) : body.contents,
    system: counted(body.systemInstruction),
    tools: body.tools,
    max_tokens: body.generationConfig?.maxOutputTokens,
    n: body.generationConfig?.candidateCount,
  }
  const uncounted = media || body.cachedContent !== undefined ? uncountedOf(body) : null
  if (uncounted) charged[UNCOUNTED_INPUT] = uncounted
  return charged
}
