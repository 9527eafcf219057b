/**
 * @module
 * What the charge reads of a Gemini request (DESIGN §11): its contents and system prompt for the
 * input bound (limits/estimate-tokens.ts), its tools, the output cap and the candidates. Parts and
 * tools are put in the bound's own vocabulary, as the chat surface's are:
 *
 * | part or tool                                    | counted as                                          |
 * |-------------------------------------------------|-----------------------------------------------------|
 * | `inlineData` image, `fileData` image by URI     | an image (`IMAGE_TOKENS`; its bytes are not text)   |
 * | `inlineData` audio                              | its bytes as text (as chat's `input_audio`)         |
 * | `inlineData` other (PDF, video, text, …)        | a file (`FILE_TOKENS` + its bytes as text)          |
 * | `fileData` PDF by URI                           | a file (`FILE_TOKENS`, as chat's `file_id`)         |
 * | `tools[i]` of Google's built-ins (`googleSearch`, `codeExecution`, …) | a provider-run tool (`SERVER_TOOL_TOKENS`) |
 * | `generationConfig.responseJsonSchema` / `responseSchema` | chat's `response_format` of that schema: its JSON text and the structured-output prompt, as the chat surface's is counted |
 * | `fileData` of any other type or none (YouTube URLs come without one), any `fileData` on a video host; `cachedContent`; `tools[i].urlContext` and `.fileSearch` | cannot be counted: the gateway never sees their length (an hour of video bills about a million tokens; a text file in the Files API may be 2 GB; fetched pages and retrieved chunks bill as input), so under a token or money limit the request is refused naming the field (`UNCOUNTED_INPUT`) |
 *
 * A body with no `inlineData` or `fileData` part is read as it is (no copy on the hot path).
 *
 * @example
 * chargedInput({ contents: [{ parts: [{ fileData: { mimeType: 'video/mp4', fileUri: 'gs://b/v' } }] }] })[UNCOUNTED_INPUT]
 * // 'contents[0].parts[0].fileData'
 */
import { SERVER_TOOL, UNCOUNTED_INPUT } from '../../limits/estimate-tokens.ts'
import type { GeminiContentIn, GeminiPartIn, GenerateContentRequest } from './request-schema.ts'

/** Hosts whose URLs Gemini reads as video, whatever `mimeType` says (YouTube: ~300 tokens a second). */
const VIDEO_HOST = /^https?:\/\/([a-z0-9-]+\.)*(youtube\.com|youtu\.be)([/:?#]|$)/i

/**
 * Google's built-in tools whose results bill as input tokens no request bounds: `urlContext`'s
 * fetched pages and `fileSearch`'s retrieved chunks. The others' prompts are the allowance's;
 * what they return is output (code execution's) or billed per call (Search grounding).
 */
const UNBOUNDED_TOOLS = new Set(['urlContext', 'fileSearch'])

/** A file by URI that is an image (by its type), never a video host's page. */
export function imageByUri(file: NonNullable<GeminiPartIn['fileData']>): boolean {
  return file.mimeType?.toLowerCase().startsWith('image/') === true && !VIDEO_HOST.test(file.fileUri)
}

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
  const found = scan(body.systemInstruction, 'systemInstruction')
  if (found) return found
  const tools = body.tools ?? []
  for (let i = 0; i < tools.length; i++)
    for (const key in tools[i]) if (UNBOUNDED_TOOLS.has(key)) return `tools[${i}].${key}`
  return null
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
  if (imageByUri(file)) return { type: 'image' }
  // A PDF's pages bound its tokens as chat's file parts are bounded; a text file's length is unseen.
  return file.mimeType?.toLowerCase() === 'application/pdf' && !VIDEO_HOST.test(file.fileUri)
    ? { type: 'file', uri: file.fileUri }
    : null
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

/** The tool entries as sent with the built-ins left out: their `functionDeclarations` alone. */
const functionsOnly = (
  tools: NonNullable<GenerateContentRequest['tools']>,
): GenerateContentRequest['tools'] =>
  tools.flatMap((t) => (t.functionDeclarations ? [{ functionDeclarations: t.functionDeclarations }] : []))

/** How many of Google's built-ins a tool entry holds (every member but `functionDeclarations`). */
const builtIns = (tool: object): number => {
  let n = 0
  for (const k in tool) if (k !== 'functionDeclarations') n++
  return n
}

/**
 * The tools as the bound counts them: an entry holding built-ins is marked with how many
 * (`SERVER_TOOL`, a symbol: its JSON text, and the keys the money limit's surcharge reads, are
 * unchanged). Unknown members count as built-ins too: Google adds tools, and an allowance too
 * many is safer than none.
 */
function countedTools(tools: GenerateContentRequest['tools']): unknown {
  if (!tools?.some((t) => builtIns(t) > 0)) return tools
  return tools.map((t) => (builtIns(t) > 0 ? { ...t, [SERVER_TOOL]: builtIns(t) } : t))
}

/**
 * The answer's schema as chat's `response_format` (the one the translated route sends), so the
 * bound counts it as it counts chat's; Google bills the schema as input on its own API too.
 */
function schemaFormat(g: GenerateContentRequest['generationConfig']): unknown {
  const schema = g?.responseJsonSchema ?? g?.responseSchema
  return schema && { type: 'json_schema', json_schema: { name: 'response', schema } }
}

/**
 * The body the charge reads (see the module's table). `dropsBuiltIns`: every route leaves Google's
 * built-ins out (`unsupported_tools: drop`), so they are neither held for nor refused as uncounted.
 */
export function chargedInput(
  body: GenerateContentRequest,
  dropsBuiltIns = false,
): Record<string | symbol, unknown> {
  if (dropsBuiltIns && body.tools) body = { ...body, tools: functionsOnly(body.tools) }
  const media = body.contents.some(hasMedia) || hasMedia(body.systemInstruction)
  const tools = countedTools(body.tools)
  const charged: Record<string | symbol, unknown> = {
    contents: media ? body.contents.map(counted) : body.contents,
    system: counted(body.systemInstruction),
    tools,
    max_tokens: body.generationConfig?.maxOutputTokens,
    n: body.generationConfig?.candidateCount,
    response_format: schemaFormat(body.generationConfig),
  }
  const uncounted =
    media || body.cachedContent !== undefined || tools !== body.tools ? uncountedOf(body) : null
  if (uncounted) charged[UNCOUNTED_INPUT] = uncounted
  return charged
}
