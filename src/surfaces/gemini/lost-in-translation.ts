/**
 * @module
 * What `convert-to-chat-request.ts` cannot carry from a Gemini request that the pass-through to a
 * gemini provider keeps as it came, named: a stream that could be continued on another target after
 * a cut is translated on every target, so a request carrying one of these keeps its pass-through
 * instead (`Forwarding.lostInTranslation`). Thought signatures (Gemini 3 refuses a function call
 * replayed without its own), `thinkingConfig` (the chat form keeps only an effort), tools Google
 * runs itself, and any field the translation does not read (`safetySettings`, `cachedContent`,
 * `labels`, a part of another kind, …).
 *
 * @example
 * lostInTranslation({ contents, safetySettings: [] }) // 'safetySettings'
 */
import type { GenerateContentRequest } from './request-schema.ts'

const REQUEST_FIELDS = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig'])
const GENERATION_FIELDS = new Set([
  'temperature',
  'topP',
  'topK',
  'maxOutputTokens',
  'stopSequences',
  'candidateCount',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
])
const PART_FIELDS = new Set(['text', 'thought', 'inlineData', 'fileData', 'functionCall', 'functionResponse'])

export function lostInTranslation(req: GenerateContentRequest): string | null {
  for (const key of Object.keys(req)) if (!REQUEST_FIELDS.has(key)) return key
  for (const [i, tool] of (req.tools ?? []).entries())
    for (const key of Object.keys(tool)) if (key !== 'functionDeclarations') return `tools[${i}].${key}`
  for (const key of Object.keys(req.generationConfig ?? {}))
    if (!GENERATION_FIELDS.has(key)) return `generationConfig.${key}`
  for (const [i, content] of req.contents.entries())
    for (const [j, part] of content.parts.entries())
      for (const key of Object.keys(part))
        if (!PART_FIELDS.has(key)) return `contents[${i}].parts[${j}].${key}`
  return null
}

/**
 * The fields the translation leaves out without refusing them (it refuses parts and tools it
 * cannot carry): top-level and `generationConfig` members it does not read, named for the
 * dropped-parameters header.
 *
 * @example
 * unreadFields({ contents, safetySettings: [], generationConfig: { responseModalities: ['TEXT'] } })
 * // ['safetySettings', 'generationConfig.responseModalities']
 */
export function unreadFields(req: GenerateContentRequest): string[] {
  const out = Object.keys(req).filter((k) => !REQUEST_FIELDS.has(k))
  for (const key of Object.keys(req.generationConfig ?? {}))
    if (!GENERATION_FIELDS.has(key) && key !== 'thinkingConfig') out.push(`generationConfig.${key}`)
  return out
}
