/**
 * @module
 * The OpenAI Responses surface (`POST /v1/responses`) on the pipeline. Stateless: `store: true` is
 * accepted and treated as false; `previous_response_id`, `conversation` and `background` are
 * refused by name. Requests to an OpenAI provider with `wire: responses` pass through (hosted tools
 * included); every other provider gets the canonical chat request and its answer is encoded as a
 * Response object or Responses stream events.
 *
 * @example
 * pipeline.handle(responsesSurface, request, server, headers)
 */

import { bearer } from '../../auth/authenticate.ts'
import { upstreamModelName } from '../../config/models.ts'
import { streamingBody } from '../../json/fields.ts'
import { SERVER_TOOL, UNCOUNTED_INPUT } from '../../limits/estimate-tokens.ts'
import type { ChatSurface } from '../../pipeline/surface.ts'
import { droppedParamsHeader, droppedToolsHeader } from '../../providers/unserved-params.ts'
import { errorResponse } from '../../util/errors.ts'
import { byteRelayed } from '../byte-relay.ts'
import { cacheKeyOf } from '../shared/session-fields.ts'
import { everyRouteDrops } from '../shared/tool-drops.ts'
import { encodeResponse } from './encode-response.ts'
import { forwardBody, responsesOutputCap } from './forward-body.ts'
import { assembleResponse, ResponsesCutGate } from './pass-through-cut.ts'
import { relayResponseJson, responsesRelay } from './relay.ts'
import type { NamespaceToolInput, ResponsesTool } from './request-schema.ts'
import { responseEvents } from './response-events.ts'
import { ResponsesStreamEncoder } from './stream-encoder.ts'
import { checkOutputLimit, decodeView, featureUses, type ResponsesView, translateView } from './view.ts'

export const responsesSurface: ChatSurface<ResponsesView> = {
  name: 'responses',
  inputParam: 'input',
  operation: 'chat',
  credential: (headers) => bearer(headers.get('authorization')),
  decode(text, limitsChecked, _url, named) {
    const view = decodeView(text, limitsChecked, named)
    return {
      model: view.input.model,
      view,
      stream: view.input.stream === true,
      session: cacheKeyOf(view.input),
    }
  },
  features: featureUses,
  body: (view, entries) => chargedBody(view, everyRouteDrops(responsesSurface, entries)),
  temperature: (view) => view.input.temperature,
  checkLimits: checkOutputLimit,
  translate(view, entry) {
    const { request, dropped, droppedParams } = translateView(view, entry)
    // The types are the client's text: escaped and bounded (`headerNames`).
    const headers = { ...droppedToolsHeader(dropped), ...droppedParamsHeader(droppedParams) }
    return { request, includeUsage: false, headers }
  },
  encodeCompletion: (completion, ctx) => encodeResponse(completion, ctx),
  streamEncoder: (ctx) => new ResponsesStreamEncoder(ctx),
  forward: {
    kind: 'openai',
    accepts: (provider) => provider.wire === 'responses',
    request: (view, entry, bodyText) => ({
      path: '/responses',
      // Stateless: nothing is kept at the upstream either, whatever the client asked.
      body: forwardBody(view.input, bodyText, {
        model: JSON.stringify(upstreamModelName(entry.model)),
        store: 'false',
      }),
      headers: {},
    }),
    outputCap: responsesOutputCap,
    relayJson(text, ctx) {
      return relayResponseJson(text, ctx.modelId, ctx.modelId.split('/')[0]!)
    },
    // A Responses-compatible server that ignored `stream`: its response, read as its events.
    events: (json, ctx) => responseEvents(json, ctx.provider.prefix, ctx.cutWithin),
    relay: (upstream, ctx, encodeCtx, framed) =>
      byteRelayed(upstream, ctx, responsesRelay(encodeCtx), framed),
    // Under a token or money limit the byte relay is counted and cut (pass-through-cut.ts).
    cut: (allowance, inputTokens) => new ResponsesCutGate(allowance, inputTokens),
    streamed: (body) => streamingBody(body),
    assemble: assembleResponse,
  },
  errorResponse,
}

/**
 * What the charge reads: the request, marked (`UNCOUNTED_INPUT`) when it names a prompt template
 * stored at OpenAI (`prompt`): its text is billed as input and never seen here, so under a token
 * or money limit the request is refused naming it (pipeline/charge.ts), on every route — a
 * translated one drops it, and a request without its prompt is not the one asked. Its tools as
 * `chargedTools` reads them.
 */
function chargedBody(view: ResponsesView, dropsHosted: boolean): unknown {
  const req = view.input
  const tools = req.tools?.some((t) => t.type !== 'function')
    ? chargedTools(req.tools, dropsHosted)
    : req.tools
  const charged = tools === req.tools ? req : { ...req, tools }
  return req.prompt === undefined || req.prompt === null
    ? charged
    : { ...charged, [UNCOUNTED_INPUT]: 'prompt' }
}

/**
 * The tools in the bound's vocabulary: a `namespace` group is function tools (its text counted as
 * a client tool's, not held as a provider-run tool), the hosted tools inside it held as such (a
 * `SERVER_TOOL` count); `dropsHosted` — every route leaves the hosted tools out
 * (`unsupported_tools: drop`) — none is charged.
 */
function chargedTools(tools: readonly ResponsesTool[], dropsHosted: boolean): unknown[] {
  return tools.flatMap((t) => {
    if (t.type === 'function') return [t]
    if (t.type !== 'namespace') return dropsHosted ? [] : [t]
    const hosted = (t as unknown as NamespaceToolInput).tools.filter((i) => i.type !== 'function').length
    return [{ ...t, type: 'function' }, ...(hosted && !dropsHosted ? [{ [SERVER_TOOL]: hosted }] : [])]
  })
}

export type { ResponsesView } from './view.ts'
