/**
 * @module
 * The model-serving surfaces, each with the endpoint it answers on: the one list that the
 * pipeline's surfaces, traffic's request labels, the live charts and the console's request-log
 * filter all read. A new surface is added here and nowhere else.
 */

export const SURFACES = [
  { name: 'chat', path: '/v1/chat/completions' },
  { name: 'messages', path: '/v1/messages' },
  { name: 'responses', path: '/v1/responses' },
  { name: 'embeddings', path: '/v1/embeddings' },
  // Matched by shape below: the model and the method are in the path.
  { name: 'gemini', path: '/v1beta/models/{model}:{method}' },
] as const

export type SurfaceName = (typeof SURFACES)[number]['name']

export const SURFACE_NAMES: readonly SurfaceName[] = SURFACES.map((s) => s.name)

/** The surface whose endpoint `path` is (or is below, e.g. `/v1/messages/count_tokens`), or null. */
export function surfaceAt(path: string): SurfaceName | null {
  for (const s of SURFACES) if (path === s.path || path.startsWith(`${s.path}/`)) return s.name
  // Gemini's `/v1beta/models/{model}:{method}`, and `/v1/models/…`, where `@google/genai` 3 sends.
  if (GEMINI_CALL.test(path)) return 'gemini'
  return null
}

const GEMINI_CALL = /^\/v1(?:beta)?\/models\/[^:]+:/
