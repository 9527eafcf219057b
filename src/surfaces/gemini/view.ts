/**
 * @module
 * Where a Gemini request's model and method are: its path, `/v1beta/models/{model}:{method}`
 * (`/v1/models/…` too: `@google/genai` 3 defaults to API version v1). `{model}` is the
 * `<prefix>/<model>` id with its slash, as Gemini CLI and the SDK send it, or %2F-encoded; the
 * method follows the last `:`. `?alt=sse` asks a stream in SSE; without it Google streams a JSON array.
 */
import { parseJsonObject } from '../../json/parse-json-body.ts'
import { pathOf } from '../../traffic/traffic.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'

export interface GeminiTarget {
  /** The client's model id (`prefix/name`). */
  model: string
  method: string
  /** `?alt=sse`. */
  sse: boolean
}

const MODELS_PATH = /^\/v1(?:beta)?\/models\/(.+)$/

/**
 * @example
 * geminiTarget('http://h/v1beta/models/demo/agent:streamGenerateContent?alt=sse')
 * // { model: 'demo/agent', method: 'streamGenerateContent', sse: true }
 */
export function geminiTarget(url: string): GeminiTarget | null {
  const m = MODELS_PATH.exec(pathOf(url))
  if (!m) return null
  let tail: string
  try {
    tail = decodeURIComponent(m[1]!)
  } catch {
    return null
  }
  const colon = tail.lastIndexOf(':')
  if (colon <= 0) return null
  const q = url.indexOf('?')
  const sse = q >= 0 && new URLSearchParams(url.slice(q + 1)).get('alt') === 'sse'
  return { model: tail.slice(0, colon).replace(/^models\//, ''), method: tail.slice(colon + 1), sse }
}

/** The target of a request routed here (the route matched its path, so only a bad escape fails). */
export function targetOf(url: string | undefined): GeminiTarget {
  const target = url ? geminiTarget(url) : null
  if (!target)
    throw new GatewayError(
      404,
      'not_found',
      `The path ${clip(url ? pathOf(url) : '')} names no model and method. Use /v1beta/models/<prefix>/<model>:generateContent.`,
    )
  return target
}

export const GEMINI_EXAMPLE = '{"contents": [{"role": "user", "parts": [{"text": "Hello"}]}]}'

/** The body as a JSON object, held to the gateway's structural limits. */
export function geminiBody(text: string, limitsChecked?: boolean): Record<string, unknown> {
  return parseJsonObject(text, GEMINI_EXAMPLE, limitsChecked)
}

export interface GeminiView {
  model: string
  method: string
  stream: boolean
  sse: boolean
  body: import('./request-schema.ts').GenerateContentRequest
}
