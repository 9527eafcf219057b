/**
 * @module
 * A Gemini `GenerateContentResponse` as the `streamGenerateContent?alt=sse` events it stands for:
 * for a Gemini-compatible server that was asked for a stream and answered one whole JSON body (it
 * ignored `alt=sse`, or the stream method: a response object, or the JSON array of a stream's
 * responses). The Gemini surface's pass-through (its relay, its cut under a limit and its assembly:
 * `Forwarding.events`) and the `gemini` adapter's stream decoder then read it as any stream:
 * each candidate's parts one an event, a text part's (or thought's) text in small pieces
 * (`TextPieces`: so a cut at the output allowance falls inside it, DESIGN §11; only as far as it
 * may fall) — the part's other fields (`thought`, `thoughtSignature`) on its first piece, `thought`
 * on each — any other part (a function call, inline data) whole; the candidate's own fields
 * (`finishReason`, safety ratings) on its last event, the response's `usageMetadata` on the
 * answer's last. A response without candidates (a blocked prompt) is one event as it came. An
 * `{"error": …}` body is the failure it names. Events are framed as Google frames them (CRLF).
 *
 * @example
 * geminiForwarding.events = (json, ctx) => geminiEvents(json, ctx.provider, ctx.cutWithin)
 */
import type { ProviderConfig } from '../../config/schema.ts'
import { invalidResponse } from '../http.ts'
import { eventStream } from '../shared/event-stream.ts'
import { TextPieces } from '../shared/text-pieces.ts'
import type { GeminiCandidate, GeminiErrorBody, GeminiPart, GeminiResponse } from './gemini-types.ts'
import { mapGeminiError } from './map-gemini-error.ts'

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)

/** Checked whole (a failure is an HTTP error), then made as it is read (event-stream.ts). */
export function geminiEvents(
  json: unknown,
  provider: ProviderConfig,
  cutWithin?: number,
): ReadableStream<Uint8Array> {
  const list = Array.isArray(json) ? json : [json]
  for (const r of list) {
    if (isObject(r) && 'error' in r) throw mapGeminiError(r as GeminiErrorBody, provider)
    if (!isObject(r) || (r.candidates !== undefined && !Array.isArray(r.candidates)))
      throw invalidResponse(provider.prefix, 'the body is not a Gemini response object')
  }
  return eventStream(events(list as GeminiResponse[], new TextPieces(cutWithin)))
}

function* events(list: GeminiResponse[], pieces: TextPieces): Generator<string> {
  for (const [r, lastResponse] of withLast(list)) {
    const { candidates, usageMetadata, ...head } = r
    const usage = lastResponse && usageMetadata !== undefined ? { usageMetadata } : null
    if (!candidates?.length) {
      yield data(r)
      continue
    }
    for (const [candidate, lastCandidate] of withLast(candidates)) {
      const { content, ...own } = (isObject(candidate) ? candidate : {}) as GeminiCandidate
      const role = content?.role ?? 'model'
      const parts = Array.isArray(content?.parts) ? content.parts : []
      if (parts.length === 0) {
        yield data({ ...head, candidates: [candidate], ...(lastCandidate ? usage : null) })
        continue
      }
      for (const [part, last] of withLast(partPieces(parts, pieces)))
        yield data({
          ...head,
          candidates: [{ ...(last ? own : { index: own.index }), content: { role, parts: [part] } }],
          ...(last && lastCandidate ? usage : null),
        })
    }
  }
}

/** Each part as the stream sends it: a text part's in pieces, any other whole. */
function* partPieces(parts: GeminiPart[], pieces: TextPieces): Generator<GeminiPart> {
  for (const part of parts) {
    if (!isObject(part) || typeof part.text !== 'string' || part.text === '') {
      yield part
      continue
    }
    let first = true
    for (const text of pieces.of(part.text)) {
      yield first ? { ...part, text } : part.thought ? { text, thought: true } : { text }
      first = false
    }
  }
}

const data = (event: unknown): string => `data: ${JSON.stringify(event)}\r\n\r\n`

/** Each item, and whether it is the last. */
function* withLast<T>(items: Iterable<T>): Generator<[T, boolean]> {
  let held: T | undefined
  let has = false
  for (const item of items) {
    if (has) yield [held as T, false]
    held = item
    has = true
  }
  if (has) yield [held as T, true]
}
