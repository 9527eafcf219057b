/**
 * @module
 * Chat Completions → openai providers that speak it (`wire: chat`, the default): the request and
 * the answer pass through as text. The upstream gets the client's body with the edits in
 * `forward-request.ts`; the client gets the upstream's bytes with `model` set to its own id (and,
 * for streams, the usage chunk it did not ask for withheld: `relay-bytes.ts`, `relay-stream.ts`) — also
 * under a token or money limit, where its events are counted and cut (`pass-through-cut.ts`). The checks the
 * translating adapter makes on an answer are kept: an `{"error": …}` in a 200 → 502
 * `upstream_error`; not a completion, not an event stream → 502 `upstream_invalid_response` —
 * still as a real HTTP status when it is the stream's first event. A completion where events
 * were asked for (`stream` ignored) is read as the events it stands for (`events`), JSON
 * requests under a limit too: counted, cut and assembled like any stream.
 *
 * @example
 * chatSurface.forward = chatForwarding // chosen when the route's provider is kind openai, wire chat
 */

import { replaceStringField } from '../../json/fields.ts'
import type { Forwarding, ForwardRequest } from '../../pipeline/surface.ts'
import { maxResponseBytes } from '../../providers/body-limit.ts'
import { invalidResponse, sanitizeMessage } from '../../providers/http.ts'
import { asCompletion } from '../../providers/openai/index.ts'
import { tokenParam } from '../../providers/openai/token-limit.ts'
import { scrubbed } from '../../providers/scrub.ts'
import { completionEvents } from '../../providers/shared/completion-events.ts'
import { eventFrames } from '../../providers/sse/event-frames.ts'
import type { ChatRequestInput } from '../shared/chat-request-schema.ts'
import { forwardBody } from './forward-request.ts'
import { assembleChat, ChatCutGate } from './pass-through-cut.ts'
import { ChatBytes } from './relay-bytes.ts'

/** A chat call adds no client header: one empty record for every call, frozen (never written). */
const NO_HEADERS: Record<string, string> = Object.freeze({})

export const chatForwarding: Forwarding<ChatRequestInput> = {
  kind: 'openai',
  accepts: (provider) => provider.wire !== 'responses',
  // Asked as a stream (a JSON answer under a limit, with the usage chunk the gateway settles from)
  // in the same one edit: this forwarding has no `streamed` edit of its own.
  request(view, entry, bodyText, _headers, ask = {}) {
    const call: ForwardRequest = {
      path: '/chat/completions',
      body: forwardBody(view, bodyText, entry.model, tokenParam(entry.provider), ask),
      headers: NO_HEADERS,
    }
    // Set when asked, not spread in from an object made for it (an object a call, usually empty).
    if (ask.streamed) call.streamed = true
    if (ask.cap !== undefined) call.capped = true
    return call
  },

  // The cap goes in `forwardBody`'s own edit (`ask.cap`, under the provider's name for it): no clamp.
  outputCap: { field: tokenParam },

  relayJson(text, ctx) {
    const label = ctx.provider.prefix
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      const err = invalidResponse(label, `the body is not JSON: ${sanitizeMessage(text, 120)}`)
      throw scrubbed(err, ctx.provider)
    }
    const completion = asCompletion(json, label)
    let body = replaceStringField(text, 1, 'model', ctx.modelId)
    if (completion.model === undefined) {
      const close = body.lastIndexOf('}')
      body = `${body.slice(0, close)},"model":${JSON.stringify(ctx.modelId)}${body.slice(close)}`
    }
    return { body, usage: completion.usage ?? null }
  },

  // Under a token or money limit the byte relay is counted and cut (pass-through-cut.ts).
  cut: (allowance, inputTokens, whole) => new ChatCutGate(allowance, inputTokens, whole),
  cutsReads: true,
  assemble: assembleChat,

  // A 200 with a JSON body instead of events: an error in disguise (thrown as the failure it
  // names), or `stream` ignored — the completion, read as the chunks it stands for.
  events: (json, ctx) => completionEvents(asCompletion(json, ctx.provider.prefix), ctx.cutWithin),

  relay(upstream, ctx, encodeCtx, framed) {
    const label = ctx.provider.prefix
    const body = upstream.body
    if (!body) throw invalidResponse(label, 'the stream response has no body')
    const { view } = encodeCtx
    const encoder = new ChatBytes(
      encodeCtx.modelId,
      view.stream === true && view.stream_options?.include_usage === true,
      maxResponseBytes(ctx.provider),
      label,
      (err) => scrubbed(err, ctx.provider),
      framed,
    )
    // Framed: the gate sees each read's complete events before the relay, which runs in the
    // encoder (still inside the writer's read, so a failure in the first event is still an HTTP error).
    const stage = framed ? eventFrames(maxResponseBytes(ctx.provider), label, true) : encoder.stage
    return { plan: { body, stages: [stage], ctx }, encoder }
  },
}
