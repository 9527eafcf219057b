/**
 * @module
 * `POST /v1/responses/compact` (Codex's remote compaction) on the pipeline, as the Responses
 * surface's chat operation — keys, plans, limits, fallbacks and the ledger apply as to any turn:
 * - an OpenAI provider with `wire: responses`: passed through to its `/responses/compact`, its
 *   answer relayed (the model's own compaction). Under a token or money limit, whose cap that
 *   endpoint has no field for, the summary is asked of its `/responses` instead — streamed, cut
 *   at the allowance like any Responses pass-through — and put in the compact shape;
 * - every other provider: the summary request (compaction.ts) translated, its answer in the
 *   compact shape. Never a stream.
 *
 * @example
 * pipeline.handle(responsesCompactSurface, request, server, headers)
 */
import { bearer } from '../../auth/authenticate.ts'
import { upstreamModelName } from '../../config/models.ts'
import { parseJsonObject } from '../../json/parse-json-body.ts'
import type { ChatSurface, EncodeContext } from '../../pipeline/surface.ts'
import { invalidResponse } from '../../providers/http.ts'
import { droppedParamsHeader } from '../../providers/unserved-params.ts'
import { errorResponse } from '../../util/errors.ts'
import {
  checkCompaction,
  checkedSummary,
  compactResource,
  noToolCalls,
  outputTextOf,
  summaryRequest,
} from './compaction.ts'
import { forwardBody, responsesOutputCap } from './forward-body.ts'
import { assembleResponse, ResponsesCutGate } from './pass-through-cut.ts'
import { responseEvents } from './response-events.ts'
import { chatUsage } from './response-object.ts'
import { validateResponsesRequest } from './validate.ts'
import { checkOutputLimit, featureUses, type ResponsesView, translateView, viewOf } from './view.ts'

const COMPACT_EXAMPLE = '{"model": "<prefix>/<model>", "input": [{"role": "user", "content": "Hello"}]}'

/** The client's compaction request, and the summary request made of it. */
export interface CompactView {
  body: Record<string, unknown>
  summary: ResponsesView
}

const summaryOf = (view: CompactView): ResponsesView => view.summary

export const responsesCompactSurface: ChatSurface<CompactView> = {
  name: 'responses',
  inputParam: 'input',
  operation: 'chat',
  credential: (headers) => bearer(headers.get('authorization')),
  decode(text, limitsChecked, _url, named) {
    const body = parseJsonObject(text, COMPACT_EXAMPLE, limitsChecked)
    named?.(body.model)
    // One check, /v1/responses' own, of the client's fields and the summary request made of them.
    const summary = viewOf(noToolCalls(validateResponsesRequest(checkedSummary(body))))
    checkCompaction(body)
    return { model: summary.input.model, view: { body, summary }, stream: false }
  },
  features: (view) => featureUses(summaryOf(view)),
  body: (view) => summaryOf(view).input,
  temperature: (view) => summaryOf(view).input.temperature,
  checkLimits: (view, entry) => checkOutputLimit(summaryOf(view), entry),
  translate(view, entry) {
    const { request, droppedParams } = translateView(summaryOf(view), entry)
    return { request, includeUsage: false, headers: droppedParamsHeader(droppedParams) }
  },
  encodeCompletion(completion, ctx) {
    const message = completion.choices[0]?.message
    return compactResource(ctx.view.body, message?.content ?? message?.refusal ?? '', completion.usage)
  },
  streamEncoder() {
    throw new Error('a compaction is never streamed')
  },
  forward: {
    kind: 'openai',
    accepts: (provider) => provider.wire === 'responses',
    request(view, entry, bodyText, _headers, ask) {
      const model = upstreamModelName(entry.model)
      // Under a limit: the summary asked of its /responses, streamed (`assemble` below).
      if (ask?.streamed) {
        const body = JSON.stringify({ ...summaryRequest(view.body, true), model })
        return { path: '/responses', body, headers: {}, streamed: true }
      }
      // The client's fields, checked, as written (a field the endpoint does not take is OpenAI's to
      // refuse, by name): nothing left out in silence.
      const set = { model: JSON.stringify(model) }
      return { path: '/responses/compact', body: forwardBody(view.body, bodyText, set), headers: {} }
    },
    // Only under a limit (charge.ts), when `request` made the body a Responses request (`ask.streamed`).
    outputCap: responsesOutputCap,
    relayJson(text, ctx) {
      let json: { object?: unknown; usage?: unknown } | null = null
      try {
        json = JSON.parse(text)
      } catch {}
      if (json?.object !== 'response.compaction')
        throw invalidResponse(ctx.provider.prefix, 'the body is not a compaction object')
      return { body: text, usage: chatUsage(json.usage as Parameters<typeof chatUsage>[0]) }
    },
    // The summary's /responses from a server that ignored `stream`: read as its events, as there.
    events: (json, ctx) => responseEvents(json, ctx.provider.prefix, ctx.cutWithin),
    cut: (allowance, inputTokens) => new ResponsesCutGate(allowance, inputTokens),
    assemble(events, ctx: EncodeContext<CompactView>) {
      const answer = assembleResponse(events, ctx)
      const summary = outputTextOf((JSON.parse(answer.body) as { output?: unknown }).output)
      return {
        body: JSON.stringify(compactResource(ctx.view.body, summary, answer.usage)),
        usage: answer.usage,
      }
    },
    relay() {
      throw new Error('a compaction is never streamed')
    },
  },
  errorResponse,
}
