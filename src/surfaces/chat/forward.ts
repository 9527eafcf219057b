/**
 * @module
 * Chat Completions → openai providers that speak it (`wire: chat`, the default): the request and
 * the answer pass through as text. The upstream gets the client's body with the edits in
 * `forward-request.ts`; the client gets the upstream's bytes with `model` set to its own id (and,
 * for streams, the usage chunk it did not ask for withheld: `relay-stream.ts`). The checks the
 * translating adapter makes on an answer are kept: an `{"error": …}` in a 200 → 502
 * `upstream_error`; not a completion, not an event stream → 502 `upstream_invalid_response` —
 * still as a real HTTP status when it is the stream's first event.
 *
 * @example
 * chatSurface.forward = chatForwarding // chosen when the route's provider is kind openai, wire chat
 */
import type { ChatRequestInput } from '../../gateway/chat-request-schema.ts'
import type { Forwarding, RawEvent } from '../../pipeline/surface.ts'
import { invalidResponse, readJson, sanitizeMessage } from '../../providers/http.ts'
import { asCompletion, bodyError } from '../../providers/openai/index.ts'
import { upstreamPlan } from '../../providers/stream-plan.ts'
import { scrubbed } from '../../providers/upstream-errors.ts'
import { replaceStringField } from '../../util/json-fields.ts'
import { forwardBody } from './forward-request.ts'
import { ChatRelay } from './relay-stream.ts'

export const chatForwarding: Forwarding<ChatRequestInput> = {
  kind: 'openai',
  accepts: (provider) => provider.wire !== 'responses',
  request: (view, entry, bodyText) => ({
    path: '/chat/completions',
    body: forwardBody(view, bodyText, entry.model),
    headers: {},
  }),

  async relayJson(upstream, ctx) {
    const label = ctx.provider.prefix
    const text = await upstream.text()
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

  relayStream: (ctx) =>
    new ChatRelay(
      ctx.modelId,
      ctx.view.stream === true && ctx.view.stream_options?.include_usage === true,
      ctx.provider.prefix,
    ),

  async streamPlan(upstream, ctx) {
    const label = ctx.provider.prefix
    if ((upstream.headers.get('content-type') ?? '').includes('application/json')) {
      // A 200 with a JSON body instead of events: an error in disguise, or `stream` ignored.
      const json = await readJson(upstream, ctx)
      throw bodyError(json, label) ?? invalidResponse(label, 'expected an event stream, got a JSON body')
    }
    if (!upstream.body) throw invalidResponse(label, 'the stream response has no body')
    return upstreamPlan(upstream.body, ctx, new FirstEventCheck(label))
  },
}

/**
 * Runs the relay's checks on the first event that has data, in the writer's read: when they throw,
 * the stream fails before the status is sent, so an upstream whose first event is an error or
 * garbage is a real HTTP error, as on the translating route. Every event passes as it came (the
 * relay checks the later ones).
 */
class FirstEventCheck implements Transformer<RawEvent, RawEvent> {
  private probe: ChatRelay | null

  constructor(label: string) {
    this.probe = new ChatRelay('', false, label)
  }

  transform(ev: RawEvent, controller: TransformStreamDefaultController<RawEvent>): void {
    if (this.probe !== null && ev.data !== '' && ev.data !== '[DONE]') {
      const probe = this.probe
      this.probe = null
      probe.edit(ev)
    }
    controller.enqueue(ev)
  }
}
