/**
 * @module
 * Gemini → gemini providers: the request and the answer pass through. The model is in the path,
 * not the body, so the upstream gets the client's body byte for byte at
 * `/models/{upstream model}:{method}` (a stream always asked as `?alt=sse`); the client gets the
 * upstream's events as they came (`ByteRelay`; a client of the JSON-array form gets each event's
 * JSON as an array element). Every event is a whole `GenerateContentResponse`, small, so each is
 * parsed for its `usageMetadata`, its finish and an error; none is re-encoded, so thought
 * signatures, grounding and whatever Google adds survive. Under a token or money limit the events
 * are counted and cut at the allowance (`GeminiCutGate`), and a JSON request is streamed and its
 * events assembled into one response (`assembleResponse`). A server that ignored `alt=sse` (one
 * whole JSON body) is read as the events it stands for (providers/gemini/response-events.ts).
 */
import { upstreamModelName } from '../../config/models.ts'
import { setTopLevel, topLevelValue } from '../../json/fields.ts'
import type { Usage } from '../../operations/chat.ts'
import { AllowanceGate } from '../../pipeline/output-allowance.ts'
import type { EncodeContext, Forwarding } from '../../pipeline/surface.ts'
import { maxResponseBytes } from '../../providers/body-limit.ts'
import { convertGeminiUsage } from '../../providers/gemini/convert-gemini-usage.ts'
import type { GeminiErrorBody, GeminiPart, GeminiResponse } from '../../providers/gemini/gemini-types.ts'
import { mapGeminiError } from '../../providers/gemini/map-gemini-error.ts'
import { geminiEvents } from '../../providers/gemini/response-events.ts'
import { invalidResponse, streamInterrupted } from '../../providers/upstream-errors.ts'
import type { GatewayError } from '../../util/errors.ts'
import { ByteRelay, byteRelayed, type EventAction, eventData, eventValue } from '../byte-relay.ts'
import { geminiErrorBody } from './errors.ts'
import { lostInTranslation } from './lost-in-translation.ts'
import { GeminiFraming } from './stream-encoder.ts'
import type { GeminiView } from './view.ts'

const text = new TextEncoder()

type Json = Record<string, any>

function parse(data: string): Json | null {
  try {
    const v = JSON.parse(data) as unknown
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null
  } catch {
    return null
  }
}

/**
 * The generated text of one event, per candidate index: text, thoughts, function names and args,
 * and code execution's code and output (billed as output tokens, so counted toward the cut).
 */
function generated(res: GeminiResponse): Array<[number, string]> {
  return (res.candidates ?? []).map((c, position) => {
    let t = ''
    for (const part of c.content?.parts ?? []) {
      if (typeof part.text === 'string') t += part.text
      if (part.functionCall) t += part.functionCall.name + JSON.stringify(part.functionCall.args ?? {})
      const { executableCode, codeExecutionResult } = part as Json
      if (typeof executableCode?.code === 'string') t += executableCode.code
      if (typeof codeExecutionResult?.output === 'string') t += codeExecutionResult.output
    }
    return [c.index ?? position, t]
  })
}

/**
 * `generationConfig.maxOutputTokens` set to `n`, edited in the text (`setTopLevel` on the body and
 * on its `generationConfig`, which the schema holds to an object): the body, as large as the
 * client's, is scanned, never parsed (DESIGN §16).
 */
export function capOutput(body: string, n: number): string {
  const config = topLevelValue(body, 'generationConfig')
  const capped =
    config === undefined ? `{"maxOutputTokens":${n}}` : setTopLevel(config, { maxOutputTokens: String(n) })
  return setTopLevel(body, { generationConfig: capped })
}

/**
 * Events the cut gate parsed (under a limit every event passes it before the relay and, for a JSON
 * answer, the assembly): their JSON, so that each event is parsed once (DESIGN §16).
 */
const parsedEvents = new WeakMap<Uint8Array, Json | null>()

export const geminiForwarding: Forwarding<GeminiView> = {
  kind: 'gemini',
  request: (view, entry, bodyText) => ({
    path: `/models/${encodeURIComponent(upstreamModelName(entry.model))}:${view.method}${view.stream ? '?alt=sse' : ''}`,
    body: bodyText,
    headers: {},
  }),
  outputCap: { field: () => 'maxOutputTokens', clamp: capOutput, fill: capOutput },
  lostInTranslation: (view) => lostInTranslation(view.body),

  relayJson(body, ctx) {
    const parsed = parse(body)
    if (parsed === null)
      throw invalidResponse(ctx.provider.prefix, 'the body is not a Gemini response object')
    if (parsed.error) throw mapGeminiError(parsed as GeminiErrorBody, ctx.provider)
    return { body, usage: parsed.usageMetadata ? convertGeminiUsage(parsed.usageMetadata) : null }
  },

  relay: (upstream, ctx, encodeCtx, framed) => byteRelayed(upstream, ctx, new GeminiRelay(encodeCtx), framed),
  events: (json, ctx) => geminiEvents(json, ctx.provider, ctx.cutWithin),
  cut: (allowance, inputTokens) => new GeminiCutGate(allowance, inputTokens),
  streamed: (body, path) => ({
    path: `${path.replace(/:generateContent$/, ':streamGenerateContent')}?alt=sse`,
    body,
  }),
  assemble: assembleResponse,
}

/** One per relayed stream: the upstream's events, read for usage, finish and errors. */
export class GeminiRelay extends ByteRelay {
  readonly keepalive: Uint8Array
  readonly contentType: string | undefined
  private readonly framing: GeminiFraming
  private usageSeen: Usage | null = null
  private finished = false
  private failed: GatewayError | null = null
  private relayed = 0

  constructor(private readonly ctx: EncodeContext<GeminiView>) {
    super(maxResponseBytes(ctx.provider), ctx.provider.prefix)
    this.framing = new GeminiFraming(ctx.view.sse)
    this.keepalive = this.framing.keepalive
    this.contentType = this.framing.contentType
  }

  /** The item being encoded: under a limit one event, which the gate parsed already. */
  private item: Uint8Array | null = null

  override encode(chunk: Uint8Array): Uint8Array | null {
    this.item = chunk
    try {
      return super.encode(chunk)
    } finally {
      this.item = null
    }
  }

  protected event(buf: Buffer, start: number, end: number): EventAction {
    // The item itself, not a re-framed or joined copy of it: the gate's parse stands.
    const item = this.item
    const whole =
      item !== null &&
      buf.buffer === item.buffer &&
      buf.byteOffset === item.byteOffset &&
      start === 0 &&
      end === item.byteLength
    const seen = whole ? parsedEvents.get(item) : undefined
    // The data's text is needed to parse it, or to frame it for a client of the JSON-array form.
    const data = seen === undefined || !this.ctx.view.sse ? eventData(buf, start, end) : ''
    const res = seen !== undefined ? seen : parse(data)
    if (res === null) {
      // Not a JSON object: skipped and counted, never relayed (DESIGN §10); a comment or an event
      // without data is not malformed, and is not relayed either.
      if ((data || eventData(buf, start, end)) !== '') this.skipped++
      return null
    }
    if (res.error) {
      this.failed = mapGeminiError(res as GeminiErrorBody, this.ctx.provider)
      return this.error(this.failed)
    }
    if (res.usageMetadata) this.usageSeen = convertGeminiUsage(res.usageMetadata)
    for (const c of (res as GeminiResponse).candidates ?? []) if (c.finishReason) this.finished = true
    for (const [, t] of generated(res as GeminiResponse)) this.relayed += Buffer.byteLength(t)
    return this.ctx.view.sse ? undefined : text.encode(this.framing.frame(data))
  }

  end(): Uint8Array | null {
    if (!this.finished && !this.failed)
      throw streamInterrupted(this.label, 'the stream ended before a finishReason')
    const close = this.framing.close()
    return close === '' ? null : text.encode(close)
  }

  error(err: GatewayError): Uint8Array {
    const frame = this.framing.frame(JSON.stringify(geminiErrorBody(err)))
    return text.encode(this.ctx.view.sse ? frame : frame + this.framing.close())
  }

  usage(): Usage | null {
    return this.usageSeen
  }

  failure(): GatewayError | null {
    return this.failed
  }

  relayedBytes(): number {
    return this.relayed
  }
}

/**
 * An event's JSON (null: not a JSON object), parsed once whichever of the gate, relay and assembly
 * reads it first — on its bytes where it is one line (`eventValue`).
 */
function eventJson(ev: Uint8Array): Json | null {
  const seen = parsedEvents.get(ev)
  if (seen !== undefined) return seen
  const v = eventValue(Buffer.from(ev.buffer, ev.byteOffset, ev.byteLength), 0, ev.byteLength)
  const json = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null
  parsedEvents.set(ev, json)
  return json
}

/**
 * The cut at the output allowance (DESIGN §11): each event's generated text counted per candidate;
 * at the first event with text past the allowance the answer ends as Gemini ends one at
 * `maxOutputTokens` — an event with `finishReason: MAX_TOKENS` for each candidate and the usage
 * counted.
 */
export class GeminiCutGate extends AllowanceGate<Uint8Array> {
  private readonly seen = new Set<number>()
  private last: Json | null = null

  admit(ev: Uint8Array): boolean | Promise<boolean> {
    const res = eventJson(ev)
    if (res === null || res.error) return true
    this.last = res
    // Counted, then asked: may the event go with its text? Refused, it is taken back out.
    this.allowance.begin()
    let any = false
    for (const [index, t] of generated(res as GeminiResponse)) {
      this.seen.add(index)
      if (t === '') continue
      any = true
      this.allowance.addTo(index, t)
    }
    return any ? this.allowance.allows() : true
  }

  ending(): Uint8Array[] {
    const indexes = this.seen.size ? [...this.seen].sort((a, b) => a - b) : [0]
    const res: GeminiResponse = {
      candidates: indexes.map((index) => ({
        content: { role: 'model', parts: [{ text: '' }] },
        finishReason: 'MAX_TOKENS',
        index,
      })),
      usageMetadata: {
        promptTokenCount: this.inputTokens,
        candidatesTokenCount: this.counted,
        totalTokenCount: this.inputTokens + this.counted,
      },
    }
    if (typeof this.last?.modelVersion === 'string') res.modelVersion = this.last.modelVersion
    if (typeof this.last?.responseId === 'string') res.responseId = this.last.responseId
    return [text.encode(`data: ${JSON.stringify(res)}\n\n`)]
  }
}

/**
 * One `GenerateContentResponse` from a stream's events: each candidate's parts in order (adjacent
 * text parts of the same kind joined, as one answer holds them), its last finish, the last usage.
 */
export function assembleResponse(
  events: Uint8Array[],
  ctx: EncodeContext<GeminiView>,
): { body: string; usage: Usage | null } {
  const candidates = new Map<number, Json>()
  let out: Json = {}
  let seen = false
  let finished = false
  for (const ev of events) {
    const res = eventJson(ev)
    if (res === null) continue
    if (res.error) throw mapGeminiError(res as GeminiErrorBody, ctx.provider)
    const { candidates: cs, ...rest } = res as GeminiResponse & Json
    out = { ...out, ...rest }
    seen = true
    ;(cs ?? []).forEach((c: Json, position: number) => {
      const index = (c.index as number | undefined) ?? position
      const into = candidates.get(index) ?? { content: { role: 'model', parts: [] as GeminiPart[] }, index }
      const { content, ...fields } = c
      Object.assign(into, fields)
      const parts = into.content.parts as GeminiPart[]
      for (const part of (content?.parts ?? []) as GeminiPart[]) {
        const prev = parts.at(-1)
        const joinable = (p: GeminiPart | undefined) =>
          p !== undefined &&
          typeof p.text === 'string' &&
          Object.keys(p).every((k) => k === 'text' || k === 'thought')
        if (joinable(prev) && joinable(part) && prev!.thought === part.thought)
          prev!.text += part.text as string
        else parts.push({ ...part })
      }
      if (c.finishReason) finished = true
      candidates.set(index, into)
    })
  }
  if (!seen) throw invalidResponse(ctx.provider.prefix, 'the stream has no event')
  if (!finished) throw streamInterrupted(ctx.provider.prefix, 'the stream ended before a finishReason')
  const body: Json = { candidates: [...candidates.values()].sort((a, b) => a.index - b.index), ...out }
  const usage = body.usageMetadata ? convertGeminiUsage(body.usageMetadata) : null
  return { body: JSON.stringify(body), usage }
}
