/**
 * @module
 * The cut at the output allowance (DESIGN §11) on the Responses pass-through (an openai provider
 * with `wire: responses`): under a token or money limit the answer keeps its byte relay
 * (relay.ts), and this gate counts the generated text of its events as they are relayed — every
 * `*.delta` event's `delta` (output text, refusals, reasoning summaries and text, tool arguments)
 * and a function call's name — into the request's `OutputAllowance`, as the chat chunk gate does
 * on the translated path. At the first event with text after the count reached the allowance (the
 * event that crossed the line went out: the only one beyond), the answer ends as the translated
 * path ends it: each open part and item closed with its `.done` events (the text as relayed), the
 * items `incomplete`, then `response.incomplete` with `incomplete_details.reason:
 * "max_output_tokens"`, the output items and the usage (the input as reserved, the output as
 * counted), numbered after the last event relayed; the writer cancels the upstream. The ending
 * goes through the relay like any event (its `model` becomes the client's id). Every event the
 * gate lets through goes on as the upstream wrote it.
 *
 * A JSON request under a limit is sent upstream as a stream (`streamingBody`, json/fields.ts) and its
 * events, as the gate let them through, put together as the response object
 * (`assembleResponse`): the terminal event's response, with the finished items where it lists none.
 */
import type { Usage } from '../../operations/chat.ts'
import { AllowanceGate } from '../../pipeline/output-allowance.ts'
import type { EncodeContext } from '../../pipeline/surface.ts'
import { invalidResponse, streamInterrupted } from '../../providers/http.ts'
import { eventData, eventName, eventValue, markUnreadable, NOT_JSON } from '../byte-relay.ts'
import { errorFields, upstreamFailure } from './relay.ts'
import { chatUsage, responsesUsage } from './response-object.ts'

type Json = Record<string, any>

const utf8 = new TextEncoder()

/**
 * An event's type (its `event:` line, else its data's `type`) and its data, parsed (null: not a
 * JSON object), on its bytes where it is one line (`eventValue`). Data that is not one JSON value
 * is malformed (DESIGN §10): the event is marked for the relay to drop, as nothing of it is counted.
 */
function parsed(ev: Uint8Array): { type: string | undefined; data: Json | null } {
  const buf = Buffer.from(ev.buffer, ev.byteOffset, ev.byteLength)
  const name = eventName(buf, 0)
  const value = eventValue(buf, 0, buf.length)
  if (value === NOT_JSON) markUnreadable(ev, 0)
  const data = value !== null && typeof value === 'object' ? (value as Json) : null
  return { type: name ?? (typeof data?.type === 'string' ? data.type : undefined), data }
}

/** A part of an item still open at the cut: its text as relayed so far. */
interface Part {
  part: Json
  text: string
  done: boolean
}

/** An output item as its events built it: added, its parts, its arguments, and whether it finished. */
interface Item {
  item: Json
  done: boolean
  parts: Map<number, Part>
  summary: Map<number, Part>
  args: string
}

export class ResponsesCutGate extends AllowanceGate<Uint8Array> {
  private readonly items = new Map<number, Item>()
  /** The response object as the last lifecycle event carried it. */
  private response: Json | null = null
  /** One past the last `sequence_number` relayed: the ending numbers on from it. */
  private seq = 0

  admit(ev: Uint8Array): boolean | Promise<boolean> {
    const { type, data } = parsed(ev)
    if (type === undefined || data === null) return true
    const index = typeof data.output_index === 'number' ? data.output_index : 0
    const delta = type.endsWith('.delta')
    let text = ''
    if (delta) {
      if (typeof data.delta !== 'string') return true
      text = data.delta
    } else {
      // A function call's name is generated text (the chat gate counts it too).
      if (type === 'response.output_item.added' && typeof data.item?.name === 'string') text = data.item.name
      if (type === 'response.output_item.done') this.allowance.end(index)
    }
    if (text === '') {
      this.relayed(type, index, data, delta)
      return true
    }
    // Counted, then asked: may the event go with its text? Refused, it is taken back out.
    this.allowance.begin()
    this.allowance.addTo(index, text)
    const ok = this.allowance.allows()
    if (ok === true) this.relayed(type, index, data, delta)
    if (typeof ok === 'boolean') return ok
    return this.relayedWhen(ok, type, index, data, delta)
  }

  /**
   * What the ending builds on, once the event is let through (a refused event never reached the
   * client). A method, not a closure made in `admit`: nothing allocated an event for it.
   */
  private relayed(type: string, index: number, data: Json, delta: boolean): void {
    if (typeof data.sequence_number === 'number') this.seq = data.sequence_number + 1
    if (delta) this.track(type, index, data, data.delta as string)
    else this.note(type, index, data)
  }

  /** `relayed` once the allowance, grown, lets the event through (only while it grows). */
  private async relayedWhen(
    ok: Promise<boolean>,
    type: string,
    index: number,
    data: Json,
    delta: boolean,
  ): Promise<boolean> {
    const yes = await ok
    if (yes) this.relayed(type, index, data, delta)
    return yes
  }

  /** The structure the ending closes: lifecycle, items, parts. */
  private note(type: string, index: number, data: Json): void {
    if (data.response && typeof data.response === 'object' && type.startsWith('response.')) {
      if (!type.startsWith('response.output_item') && !type.startsWith('response.content_part'))
        this.response = data.response as Json
    }
    const item = this.items.get(index)
    switch (type) {
      case 'response.output_item.added':
        this.items.set(index, {
          item: { ...(data.item as Json) },
          done: false,
          parts: new Map(),
          summary: new Map(),
          args: '',
        })
        break
      case 'response.output_item.done':
        if (item) {
          item.done = true
          item.item = data.item as Json
        } else
          this.items.set(index, {
            item: data.item as Json,
            done: true,
            parts: new Map(),
            summary: new Map(),
            args: '',
          })
        break
      case 'response.content_part.added':
        item?.parts.set(data.content_index ?? 0, { part: { ...(data.part as Json) }, text: '', done: false })
        break
      case 'response.content_part.done': {
        const p = item?.parts.get(data.content_index ?? 0)
        if (p) p.done = true
        break
      }
      case 'response.reasoning_summary_part.added':
        item?.summary.set(data.summary_index ?? 0, {
          part: { ...(data.part as Json) },
          text: '',
          done: false,
        })
        break
      case 'response.reasoning_summary_part.done': {
        const p = item?.summary.get(data.summary_index ?? 0)
        if (p) p.done = true
        break
      }
    }
  }

  /** A delta's text into the open part or item it belongs to. */
  private track(type: string, index: number, data: Json, text: string): void {
    const item = this.items.get(index)
    if (!item) return
    if (type === 'response.function_call_arguments.delta') item.args += text
    else if (type === 'response.reasoning_summary_text.delta') {
      const p = item.summary.get(data.summary_index ?? 0)
      if (p) p.text += text
    } else {
      const ci = data.content_index ?? 0
      let p = item.parts.get(ci)
      // Reasoning text arrives without a part of its own announced.
      if (!p && type === 'response.reasoning_text.delta') {
        p = { part: { type: 'reasoning_text', text: '' }, text: '', done: false }
        item.parts.set(ci, p)
      }
      if (p) p.text += text
    }
  }

  ending(): Uint8Array[] {
    const events: Json[] = []
    const emit = (type: string, o: Json) => events.push({ type, ...o, sequence_number: this.seq++ })
    const output: Json[] = []
    for (const index of [...this.items.keys()].sort((a, b) => a - b)) {
      const it = this.items.get(index)!
      if (!it.done) {
        it.item = this.close(it, index, emit)
        emit('response.output_item.done', { output_index: index, item: it.item })
        it.done = true
      }
      output.push(it.item)
    }
    const usage = responsesUsage({
      prompt_tokens: this.inputTokens,
      completion_tokens: this.counted,
      total_tokens: this.inputTokens + this.counted,
    })
    emit('response.incomplete', {
      response: {
        ...(this.response ?? { object: 'response' }),
        status: 'incomplete',
        completed_at: null,
        incomplete_details: { reason: 'max_output_tokens' },
        output,
        usage,
      },
    })
    return events.map((e) => utf8.encode(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`))
  }

  /** An open item's closing events (its open parts' `.done`); returns the item as finished, `incomplete`. */
  private close(it: Item, index: number, emit: (type: string, o: Json) => void): Json {
    const id = it.item.id
    const at = { item_id: id, output_index: index }
    const item: Json = { ...it.item, status: 'incomplete' }
    const type = it.item.type
    if (type === 'function_call') {
      emit('response.function_call_arguments.done', { ...at, arguments: it.args })
      item.arguments = it.args
      return item
    }
    if (it.summary.size > 0) {
      const summary: Json[] = []
      for (const [si, p] of [...it.summary].sort((a, b) => a[0] - b[0])) {
        const part = { ...p.part, type: 'summary_text', text: p.text }
        if (!p.done) {
          emit('response.reasoning_summary_text.done', { ...at, summary_index: si, text: p.text })
          emit('response.reasoning_summary_part.done', { ...at, summary_index: si, part })
        }
        summary.push(part)
      }
      item.summary = summary
    }
    if (it.parts.size > 0) {
      const content: Json[] = []
      for (const [ci, p] of [...it.parts].sort((a, b) => a[0] - b[0])) {
        const refusal = p.part.type === 'refusal'
        const part = refusal ? { ...p.part, refusal: p.text } : { ...p.part, text: p.text }
        if (!p.done) {
          const c = { ...at, content_index: ci }
          if (refusal) emit('response.refusal.done', { ...c, refusal: p.text })
          else if (p.part.type === 'reasoning_text')
            emit('response.reasoning_text.done', { ...c, text: p.text })
          else emit('response.output_text.done', { ...c, text: p.text, logprobs: [] })
          if (p.part.type !== 'reasoning_text') emit('response.content_part.done', { ...c, part })
        }
        content.push(part)
      }
      item.content = content
    }
    return item
  }
}

/**
 * The response object from the stream's events as the gate let them through (its ending
 * included): the terminal event's (`response.completed` or `.incomplete`), with the client's model
 * id, and the finished items (`output_item.done`) where it lists none. An `error` event or
 * `response.failed` fails the answer as the stream relay fails it; a stream without a terminal
 * event as interrupted.
 */
export function assembleResponse(
  events: Uint8Array[],
  ctx: EncodeContext<unknown>,
): { body: string; usage: Usage | null } {
  const label = ctx.provider.prefix
  let response: Json | null = null
  const items: Json[] = []
  for (const ev of events) {
    const { type, data } = parsed(ev)
    if (type === 'error') {
      const buf = Buffer.from(ev.buffer, ev.byteOffset, ev.byteLength)
      throw upstreamFailure(label, errorFields(eventData(buf, 0, buf.length)))
    }
    if (data === null) continue
    if (type === 'response.failed') throw upstreamFailure(label, data.response?.error)
    if (type === 'response.output_item.done' && typeof data.output_index === 'number')
      items[data.output_index] = data.item
    if (type === 'response.completed' || type === 'response.incomplete') {
      if (!data.response || typeof data.response !== 'object')
        throw invalidResponse(label, `a ${type} event has no response`)
      response = data.response as Json
      break
    }
  }
  if (response === null) throw streamInterrupted(label, 'the stream ended before response.completed')
  const listed = Array.isArray(response.output) ? (response.output as Json[]) : []
  const output = listed.length > 0 ? listed : items.filter(Boolean)
  const body = { ...response, model: ctx.modelId, output }
  return { body: JSON.stringify(body), usage: chatUsage(response.usage) }
}
