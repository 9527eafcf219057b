/**
 * @module
 * Canonical chat chunks → Gemini's stream: each event a whole `GenerateContentResponse` holding the
 * next slice of each candidate, as Google streams it. With `?alt=sse` (what Gemini CLI and the
 * SDKs ask) events are `data: {…}` lines framed by CRLF CRLF, as Google frames them; without it,
 * Google answers one JSON array written as it grows (`[{…}`, `,\r\n{…}`, …, `]`), and so does this.
 *
 * Text and reasoning deltas go out as they come (reasoning as `thought: true` parts, only when the
 * request set `includeThoughts`). Tool calls arrive as argument fragments; Gemini sends each
 * `functionCall` whole, so they are gathered and sent with the candidate's `finishReason`. That
 * last event is held for the usage chunk that follows it, so the finish and `usageMetadata` go
 * out together, as Gemini's last event carries both.
 */
import type { ChatCompletionChunk, Usage } from '../../operations/chat.ts'
import type { StreamEncoder } from '../../pipeline/stream/encoder.ts'
import type { GeminiCandidate, GeminiPart, GeminiResponse } from '../../providers/gemini/gemini-types.ts'
import type { GatewayError } from '../../util/errors.ts'
import { functionCallPart, geminiFinishReason, geminiUsage, responseIdOf } from './encode.ts'
import { geminiErrorBody } from './errors.ts'

const text = new TextEncoder()
export const SSE_KEEPALIVE = text.encode(': keepalive\r\n\r\n')
/** JSON whitespace between array elements: all a client of the array form may be sent while quiet. */
const ARRAY_KEEPALIVE = text.encode('\r\n')

/** How a Gemini stream is framed: SSE events, or the elements of one JSON array. */
export class GeminiFraming {
  private opened = false

  constructor(readonly sse: boolean) {}

  get contentType(): string | undefined {
    return this.sse ? undefined : 'application/json; charset=UTF-8'
  }

  get keepalive(): Uint8Array {
    return this.sse ? SSE_KEEPALIVE : ARRAY_KEEPALIVE
  }

  /** One event's JSON text, framed. */
  frame(json: string): string {
    if (this.sse) return `data: ${json}\r\n\r\n`
    const lead = this.opened ? ',\r\n' : '['
    this.opened = true
    return lead + json
  }

  /** What closes the stream: nothing for SSE, the array's `]`. */
  close(): string {
    if (this.sse) return ''
    const out = this.opened ? ']' : '[]'
    this.opened = true
    return out
  }
}

interface Pending {
  calls: Map<number, { id: string; name: string; arguments: string }>
  finish?: string
}

export class GeminiStreamEncoder implements StreamEncoder<ChatCompletionChunk> {
  readonly keepalive: Uint8Array
  readonly contentType: string | undefined
  private readonly framing: GeminiFraming
  private readonly choices = new Map<number, Pending>()
  private finished: GeminiCandidate[] = []
  private seenUsage: Usage | null = null
  private id = ''
  private bytes = 0
  private content = false

  constructor(
    private readonly modelId: string,
    sse: boolean,
    private readonly thoughts: boolean,
  ) {
    this.framing = new GeminiFraming(sse)
    this.keepalive = this.framing.keepalive
    this.contentType = this.framing.contentType
  }

  encode(chunk: ChatCompletionChunk): Uint8Array | null {
    const out = this.encodeText(chunk)
    return out === null ? null : text.encode(out)
  }

  encodeText(chunk: ChatCompletionChunk): string | null {
    this.id ||= responseIdOf(chunk.id)
    if (chunk.usage) this.seenUsage = chunk.usage
    const candidates: GeminiCandidate[] = []
    for (const choice of chunk.choices) {
      let pending = this.choices.get(choice.index)
      if (!pending) {
        pending = { calls: new Map() }
        this.choices.set(choice.index, pending)
      }
      const parts: GeminiPart[] = []
      const d = choice.delta
      if (this.thoughts && d.reasoning_content) {
        parts.push({ text: d.reasoning_content, thought: true })
        this.bytes += Buffer.byteLength(d.reasoning_content)
      }
      if (d.content) {
        parts.push({ text: d.content })
        this.bytes += Buffer.byteLength(d.content)
        this.content = true
      }
      for (const t of d.tool_calls ?? []) {
        const call = pending.calls.get(t.index) ?? { id: '', name: '', arguments: '' }
        if (t.id) call.id = t.id
        if (t.function?.name) call.name += t.function.name
        if (t.function?.arguments) call.arguments += t.function.arguments
        this.bytes +=
          Buffer.byteLength(t.function?.name ?? '') + Buffer.byteLength(t.function?.arguments ?? '')
        pending.calls.set(t.index, call)
      }
      if (choice.finish_reason) {
        for (const [, call] of [...pending.calls].sort(([a], [b]) => a - b))
          parts.push(functionCallPart({ ...call, function: call }))
        pending.calls.clear()
        this.content = true
        this.finished.push({
          content: { role: 'model', parts },
          finishReason: geminiFinishReason(choice.finish_reason),
          index: choice.index,
        })
        continue
      }
      if (parts.length) candidates.push({ content: { role: 'model', parts }, index: choice.index })
    }
    let out = ''
    if (candidates.length) out += this.event({ candidates })
    // The finish waits for the usage chunk (the last one) unless none will come.
    if (chunk.usage && this.finished.length) out += this.flushFinished()
    return out === '' ? null : out
  }

  private flushFinished(): string {
    const candidates = this.finished.map((c) => ({
      ...c,
      content: { role: 'model', parts: c.content!.parts!.length ? c.content!.parts! : [{ text: '' }] },
    }))
    this.finished = []
    const res: GeminiResponse = { candidates }
    if (this.seenUsage) res.usageMetadata = geminiUsage(this.seenUsage)
    return this.event(res)
  }

  private event(res: GeminiResponse): string {
    res.modelVersion = this.modelId
    if (this.id) res.responseId = this.id
    return this.framing.frame(JSON.stringify(res))
  }

  end(): Uint8Array | null {
    const out = (this.finished.length ? this.flushFinished() : '') + this.framing.close()
    return out === '' ? null : text.encode(out)
  }

  error(err: GatewayError): Uint8Array {
    return text.encode(this.framing.frame(JSON.stringify(geminiErrorBody(err))) + this.framing.close())
  }

  usage(): Usage | null {
    return this.seenUsage
  }

  relayedBytes(): number {
    return this.bytes
  }

  contentStarted(): boolean {
    return this.content
  }
}
