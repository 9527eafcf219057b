/**
 * @module
 * The `openai` provider kind: any OpenAI-compatible chat API (OpenAI, Groq, Together, vLLM,
 * Ollama ...). The request passes through as the gateway built it, its token limit under the name
 * the upstream knows (`token-limit.ts`); streams always ask for usage.
 *
 * @example
 * const adapter = createOpenAIAdapter({ prefix: 'groq', kind: 'openai',
 *   base_url: 'https://api.groq.com/openai/v1', api_key: key, models })
 */
import type { ProviderConfig } from '../../config/schema.ts'
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../../operations/chat.ts'
import type { GatewayError } from '../../util/errors.ts'
import { invalidResponse, isJsonAnswer, openAIStyleError, readJson, upstreamFetch } from '../http.ts'
import { requestBody } from '../request-body.ts'
import { completionEvents } from '../shared/completion-events.ts'
import { type StreamPlan, upstreamPlan } from '../stream-plan.ts'
import type { CallContext, ForwardCall, ProviderAdapter } from '../types.ts'
import { apiUrl, bodyError, chatCompletionsUrl, requestHeaders } from './api.ts'
import { createOpenAIEmbeddings } from './embeddings.ts'
import { OpenAIChunkDecoder } from './stream.ts'
import { tokenParam, withTokenParam } from './token-limit.ts'

export function createOpenAIAdapter(provider: ProviderConfig): ProviderAdapter {
  const label = provider.prefix
  const url = chatCompletionsUrl(provider)
  const jsonHeaders = requestHeaders(provider, 'application/json')
  const sseHeaders = requestHeaders(provider, 'text/event-stream')
  // A pass-through's headers, built once: a call with no client headers and a string body sends
  // them as they are (fetch copies what it is given), not a copy of its own made and edited. Its
  // `accept` is set over the provider's own, as each call's copy set it.
  const passThroughHeaders = new Headers(jsonHeaders)
  passThroughHeaders.set('accept', 'application/json, text/event-stream')
  const root = apiUrl(provider, '')
  const mapError = (status: number, text: string): GatewayError => openAIStyleError(status, text, label)
  const param = tokenParam(provider)

  const adapter: ProviderAdapter = {
    async complete(req: ChatRequest, ctx: CallContext): Promise<ChatCompletion> {
      // OpenAI refuses stream_options on a non-streaming request.
      const body = JSON.stringify({
        ...withTokenParam(req, param),
        stream: undefined,
        stream_options: undefined,
      })
      const res = await upstreamFetch(url, { method: 'POST', headers: jsonHeaders, body }, ctx, mapError)
      return asCompletion(await readJson(res, ctx), label)
    },

    async stream(req: ChatRequest, ctx: CallContext): Promise<StreamPlan<ChatCompletionChunk>> {
      // Usage is always requested: the gateway records it even when the client did not ask.
      const stream_options = { ...req.stream_options, include_usage: true }
      const body = JSON.stringify({ ...withTokenParam(req, param), stream: true, stream_options })
      const res = await upstreamFetch(url, { method: 'POST', headers: sseHeaders, body }, ctx, mapError)
      // A 200 with a JSON body instead of events: an error in disguise (thrown as the failure it
      // names), or `stream` ignored — the completion, read as the chunks it stands for.
      const events = isJsonAnswer(res)
        ? completionEvents(asCompletion(await readJson(res, ctx), label), ctx.cutWithin)
        : res.body
      if (!events) throw invalidResponse(label, 'the stream response has no body')
      return upstreamPlan(events, ctx, new OpenAIChunkDecoder(label, ctx.onMalformed))
    },

    /** Another wire's embeddings (Gemini's); `/v1/embeddings` passes through `forward`. */
    embeddings: createOpenAIEmbeddings(provider),

    /** Same-wire relay (`wire: responses` providers): `req.path` is under `base_url`, e.g. `/responses`. */
    forward(req: ForwardCall, ctx: CallContext): Promise<Response> {
      // The shared headers as they are, or a copy when something is added to them: client headers,
      // or a spliced body's content-length (requestBody sets it).
      const headers =
        hasAny(req.headers) || typeof req.body !== 'string'
          ? new Headers(passThroughHeaders)
          : passThroughHeaders
      for (const name in req.headers) headers.set(name, req.headers[name]!)
      const init = { method: 'POST', headers, body: requestBody(req.body, headers) }
      return upstreamFetch(`${root}${req.path}`, init, ctx, mapError)
    },
  }
  return adapter
}

/** Whether a record has a field: without making the array of its entries (`Object.entries`) a call. */
function hasAny(record: Record<string, string>): boolean {
  for (const _ in record) return true
  return false
}

export function asCompletion(json: unknown, label: string): ChatCompletion {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw invalidResponse(label, 'the body is not a JSON object')
  }
  const error = bodyError(json, label)
  if (error) throw error
  const choices: unknown = (json as ChatCompletion).choices
  if (!Array.isArray(choices)) {
    throw invalidResponse(label, 'the completion has no choices array')
  }
  for (const choice of choices) {
    const problem = choiceProblem(choice)
    if (problem) throw invalidResponse(label, problem)
  }
  return json as ChatCompletion
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/** What is wrong with one of a completion's choices, as its readers use it; null when nothing. */
function choiceProblem(choice: unknown): string | null {
  if (!isObject(choice)) return 'a choice is not an object'
  const m = choice.message
  if (m === undefined || m === null) return null
  if (!isObject(m)) return "a choice's message is not an object"
  const calls = m.tool_calls
  if (calls === undefined || calls === null) return null
  if (!Array.isArray(calls)) return "a message's tool_calls is not an array"
  for (const t of calls) {
    if (!isObject(t) || !isObject(t.function)) return 'a tool call is not an object with a function object'
  }
  return null
}
