/**
 * @module
 * The cut at the output allowance (DESIGN §11) on the translated path, where every answer is chat
 * chunks whatever the surface: `ChunkGate` counts each chunk's generated text (all choices) into
 * the request's `OutputAllowance` and, at the first chunk with text after the count reached it
 * (the chunk that crossed the line went out: the only one beyond), ends the answer as the limit
 * ended it — `finish_reason: "length"` on every open choice (the Messages encoder makes
 * it `stop_reason: "max_tokens"`, the Responses one `incomplete` / `max_output_tokens`) and the
 * usage as settled — and the writer cancels the upstream. A JSON answer is made the same way: the
 * upstream is streamed and the answer assembled (`completeWithin`), since a JSON body arrives
 * whole and could not be cut before the upstream had generated (and billed) all of it.
 *
 * A route that passes through keeps its byte relay under a limit: its surface's gate over the raw
 * events cuts it (`Forwarding.cut`, each surface's pass-through-cut.ts; the chat one counts with
 * `ChunkGate` itself, and assembles a JSON answer with `Assembly`). A stream that may be rescued
 * is translated on every route, limit or not (attempts.ts `rescueFor`), and cut here.
 */

import type { ChatCompletion, ChatCompletionChunk, Usage } from '../operations/chat.ts'
import type { StreamPlan } from '../providers/types.ts'
import { gatedItems } from './gated-read.ts'
import { AllowanceGate } from './output-allowance.ts'

type Choice = ChatCompletionChunk['choices'][number]

/**
 * Generated text of one choice's delta: content, refusal, reasoning, tool names and arguments.
 * Each field read by its name (a load the JIT caches for the chunk's shape), not by a key from a
 * list (a keyed load a field, an event).
 */
export function choiceText(choice: Choice): string {
  const delta = choice.delta
  if (!delta) return ''
  const d = delta as Record<string, unknown>
  const content = d.content
  let text = typeof content === 'string' ? content : ''
  const refusal = d.refusal
  if (typeof refusal === 'string') text += refusal
  const reasoningContent = d.reasoning_content
  if (typeof reasoningContent === 'string') text += reasoningContent
  const reasoning = d.reasoning
  if (typeof reasoning === 'string') text += reasoning
  // Most deltas have no tool calls: no empty list made for them.
  const calls = delta.tool_calls
  if (calls != null)
    for (const t of calls) {
      const f = t?.function
      if (typeof f?.name === 'string') text += f.name
      if (typeof f?.arguments === 'string') text += f.arguments
    }
  return text
}

export class ChunkGate extends AllowanceGate<ChatCompletionChunk> {
  /** Choices begun and not finished: each gets a `length` finish at the cut. */
  private readonly open = new Set<number>()
  private last: ChatCompletionChunk | null = null

  admit(chunk: ChatCompletionChunk): boolean | Promise<boolean> {
    // Counted first, then asked: may the chunk go with its text? Refused, it is taken back out.
    this.allowance.begin()
    /** The chunk carries new text. */
    let grew = false
    for (const c of chunk.choices ?? [])
      if (this.count(c.index, choiceText(c), !!c.finish_reason)) grew = true
    return this.decide(grew, chunk)
  }

  /**
   * Counts one choice's new text into the allowance (its trailing whitespace carried to the
   * choice's next text unless it finished); true when it had new text.
   */
  private count(index: number, text: string, finished: boolean): boolean {
    if (text === '' && !this.allowance.carries(index)) return false
    this.allowance.addTo(index, text, finished)
    // Only new text asks the allowance (a finish that counts the carried space does not).
    return text !== ''
  }

  /**
   * Whether `chunk`, its choices just counted (`count`), may be relayed: asked only when it
   * `grew`; noted as relayed once let through. Takes the chunk, not a callback: no closure an
   * event on the hot path (the pass-through's gate calls `admit` per event).
   */
  private decide(grew: boolean, chunk: ChatCompletionChunk): boolean | Promise<boolean> {
    const ok = grew ? this.allowance.allows() : true
    if (ok === true) this.note(chunk)
    if (typeof ok === 'boolean') return ok
    return this.noteWhen(ok, chunk)
  }

  /** `chunk` noted as relayed if `ok` says yes: apart, so `decide` makes no scope for its closure. */
  private noteWhen(ok: Promise<boolean>, chunk: ChatCompletionChunk): Promise<boolean> {
    return ok.then((yes) => {
      if (yes) this.note(chunk)
      return yes
    })
  }

  /** A choice was relayed: open until its finish (each open one gets a `length` finish at the cut). */
  private relayedChoice(index: number, finished: boolean): void {
    if (finished) this.open.delete(index)
    else this.open.add(index)
  }

  /** The ending carries the id, created and model of the last chunk relayed. */
  ending(): ChatCompletionChunk[] {
    const head = this.last
    const base = {
      id: head?.id ?? 'chatcmpl-cut',
      object: 'chat.completion.chunk' as const,
      created: head?.created ?? Math.floor(Date.now() / 1000),
      model: head?.model ?? '',
    }
    const out: ChatCompletionChunk[] = [...this.open]
      .sort((a, b) => a - b)
      .map((index) => ({ ...base, choices: [{ index, delta: {}, finish_reason: 'length' as const }] }))
    const completion = this.counted
    out.push({ ...base, choices: [], usage: usageOf(this.input, completion) })
    return out
  }

  private note(chunk: ChatCompletionChunk): void {
    this.last = chunk
    for (const c of chunk.choices ?? []) this.relayedChoice(c.index, !!c.finish_reason)
  }
}

const usageOf = (prompt: number, completion: number): Usage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
})

/**
 * A JSON answer within the allowance: the upstream streamed through the gate and the chunks
 * assembled into one completion (`finish_reason: "length"` where it was cut). `cut` says whether
 * the allowance ended it; the usage is the upstream's unless cut.
 */
export async function completeWithin(
  /** The adapter's stream of the request (asked with `stream: true`). */
  plan: StreamPlan<ChatCompletionChunk>,
  gate: ChunkGate,
): Promise<ChatCompletion> {
  const answer = new Assembly()
  const chunks = await gatedItems(plan, gate)
  for (const chunk of chunks) answer.add(chunk)
  return answer.completion()
}

/** Chat chunks put together as the completion they stream (also the chat pass-through's JSON answer under a limit). */
export class Assembly {
  private head: ChatCompletionChunk | null = null
  private usage: Usage | undefined
  private readonly choices = new Map<
    number,
    { choice: ChatCompletion['choices'][number]; text: string[]; reasoning: string[] }
  >()

  /** A chunk was added: the answer's id, model and fingerprint are known (the first chunk's). */
  get started(): boolean {
    return this.head !== null
  }

  add(chunk: ChatCompletionChunk): void {
    this.head ??= chunk
    if (chunk.usage) this.usage = chunk.usage
    for (const c of chunk.choices ?? []) this.addChoice(c)
  }

  private addChoice(c: Choice): void {
    let s = this.choices.get(c.index)
    if (!s) {
      s = {
        choice: {
          index: c.index,
          message: { role: 'assistant', content: null, refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
        text: [],
        reasoning: [],
      }
      this.choices.set(c.index, s)
    }
    if (c.finish_reason) s.choice.finish_reason = c.finish_reason
    if (c.logprobs) s.choice.logprobs = c.logprobs
    // No delta, or no tool calls in it (most chunks): nothing made for them, not even an empty list.
    const delta = c.delta
    if (!delta) return
    const d = delta as Record<string, unknown>
    const m = s.choice.message
    if (typeof d.content === 'string') s.text.push(d.content)
    const reasoning = d.reasoning_content ?? d.reasoning
    if (typeof reasoning === 'string') s.reasoning.push(reasoning)
    if (typeof d.refusal === 'string') m.refusal = (m.refusal ?? '') + d.refusal
    const calls = delta.tool_calls
    if (calls == null) return
    for (const t of calls) {
      m.tool_calls ??= []
      let call = m.tool_calls[t.index]
      if (!call) {
        call = { id: '', type: 'function', function: { name: '', arguments: '' } }
        m.tool_calls[t.index] = call
      }
      if (t.id) call.id = t.id
      if (t.function?.name) call.function.name += t.function.name
      if (t.function?.arguments) call.function.arguments += t.function.arguments
    }
  }

  completion(): ChatCompletion {
    const h = this.head
    const choices = [...this.choices.values()]
      .sort((a, b) => a.choice.index - b.choice.index)
      .map(({ choice, text, reasoning }) => {
        if (text.length) choice.message.content = text.join('')
        else if (!choice.message.tool_calls) choice.message.content = ''
        if (reasoning.length) choice.message.reasoning_content = reasoning.join('')
        if (choice.message.tool_calls) choice.message.tool_calls = choice.message.tool_calls.filter(Boolean)
        return choice
      })
    const out: ChatCompletion = {
      id: h?.id ?? 'chatcmpl-assembled',
      object: 'chat.completion',
      created: h?.created ?? Math.floor(Date.now() / 1000),
      model: h?.model ?? '',
      choices,
    }
    if (this.usage) out.usage = this.usage
    if (h?.system_fingerprint) out.system_fingerprint = h.system_fingerprint
    if (h?.service_tier !== undefined) out.service_tier = h.service_tier
    return out
  }
}
