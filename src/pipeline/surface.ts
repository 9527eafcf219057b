/**
 * @module
 * What an API surface plugs into the request pipeline. The pipeline owns every shared step —
 * auth, body, routing, the model's operation, plan, checks, admission, the provider call, usage —
 * and asks the surface only for what differs: how to find the key, how to decode a body, how to
 * encode an answer, and how errors look.
 *
 * A surface is typed by the operation it serves (`operations/operation.ts`), and carries that
 * operation's part. Chat (Chat Completions, Anthropic Messages, OpenAI Responses): the canonical
 * form is OpenAI's chat request and completion (`operations/chat.ts`); a surface translates into a
 * `ChatRequest` and encodes a `ChatCompletion` or a chunk stream back. Embeddings: the canonical
 * form is `operations/embeddings.ts`; answers are whole JSON, never streams. Where the surface and
 * the chosen provider speak the same wire (`forward.kind`), the request and the answer pass
 * through instead, with only the edits the gateway must make.
 *
 * @example
 * const chat: ChatSurface<ChatRequestInput> = {
 *   name: 'chat',
 *   operation: 'chat',
 *   credential: (headers) => bearer(headers.get('authorization')),
 *   decode: (text) => { const view = validateChatRequest(parseJsonObject(text, CHAT_EXAMPLE)); return { model: view.model, view, stream: view.stream === true } },
 *   features: detectFeatures,
 *   temperature: (view) => view.temperature,
 *   translate: (view, entry) => ({ request: applyDefaults(view, entry.model, upstreamModelName(entry.model)), includeUsage: false }),
 *   encodeCompletion: (completion, ctx) => ({ ...completion, model: ctx.modelId }),
 *   streamEncoder: (ctx) => new ChatChunkEncoder(ctx.modelId, ctx.includeUsage),
 *   errorResponse,
 * }
 * pipeline.handle(chat, request, server, headers)
 */

import type { CatalogueEntry } from '../catalogue/entry.ts'
import type { FeatureUse } from '../catalogue/features.ts'
import type { ProviderConfig } from '../config/schema.ts'
import type { ProviderKind } from '../config/schema-providers.ts'
import type { JsonLimits } from '../json/limits.ts'
import type { Windows } from '../limits/headers.ts'
import type { RowState } from '../limits/rows.ts'
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, Usage } from '../operations/chat.ts'
import type {
  EmbeddingInput,
  EmbeddingRequest,
  EmbeddingResult,
  EmbeddingUsage,
} from '../operations/embeddings.ts'
import type { Operation } from '../operations/operation.ts'
import type { StreamPlan } from '../providers/stream-plan.ts'
import type {
  CallContext,
  ForwardAsk,
  ForwardCall as ForwardRequest,
  ProviderAdapter,
} from '../providers/types.ts'
import type { SurfaceName } from '../traffic/surfaces.ts'
import type { GatewayError } from '../util/errors.ts'
import type { OutputAllowance } from './output-allowance.ts'
import type { StreamEncoder } from './stream/encoder.ts'
import type { CutGate } from './stream/types.ts'

export type { SurfaceName } from '../traffic/surfaces.ts'

/** A decoded request body: the surface's own validated view of it, plus what routing needs. */
export interface Decoded<View> {
  /** The model id as the client sent it (`prefix/name`). */
  model: string
  view: View
  stream: boolean
  /**
   * The agent session's id or cache key the body carries (`prompt_cache_key`, Messages'
   * `metadata.user_id`), for session affinity (session.ts); absent when it carries none.
   */
  session?: string | null
}

/** What an encoder knows about the request it answers. */
export interface EncodeContext<View> {
  /** The client's model id (`prefix/name`): responses report it as their model. */
  modelId: string
  /** The provider's name for the model (what the upstream reports). */
  upstreamModel: string
  provider: ProviderConfig
  requestId: string
  view: View
  /** Chat only: send the final usage chunk. Other surfaces ignore it. */
  includeUsage: boolean
}

/** The translated call: the canonical request an adapter's `complete` / `stream` receives. */
export interface Translated {
  request: ChatRequest
  includeUsage: boolean
  /** Response headers the translation adds (e.g. `x-switchyard-dropped-tools`). */
  headers?: Record<string, string>
}

/** A request relayed to a provider of the surface's own wire (the body: the client's, model swapped). */
export type { ForwardRequest }

/** A pass-through stream as the writer runs it: the plan it reads, and the encoder for the client. */
export interface Relayed {
  plan: StreamPlan<Uint8Array>
  encoder: StreamEncoder<Uint8Array>
}

/** How a surface passes requests through to providers that speak its wire. */
export interface Forwarding<View> {
  /** The provider kind with the surface's wire (chat → openai, messages → anthropic). */
  kind: ProviderKind
  /** Narrows `kind` to the providers of it that speak the wire (e.g. openai with `wire: responses`). */
  accepts?(provider: ProviderConfig): boolean
  /**
   * The upstream request: the client's body with only the model id changed. `ask`: what else it
   * is to carry (a stream asked for a JSON request under a limit, the limits' output cap); a
   * forwarding may make those edits in its one edit of the body and say so
   * (`ForwardRequest.streamed`, `.capped`), else `streamed` and `outputCap` below are applied to
   * what this returns (each a second pass over the body).
   */
  request(
    view: View,
    entry: CatalogueEntry,
    bodyText: string,
    headers: Headers,
    ask?: ForwardAsk,
  ): ForwardRequest
  /**
   * The output cap on this wire, where the limits set one (operations/chat-cap.ts): `field`, the
   * member a body without a cap gets (for `provider`: OpenAI's reasoning models refuse `max_tokens`);
   * `clamp`, a body whose own cap the limits clamped to `n`, edited in its text (`setTopLevel`: no
   * second parse of a body as large as the client's) — absent where `request` caps the body in its
   * own edit (`ask.cap`: chat). May refuse with a 400 naming the field.
   */
  readonly outputCap: {
    field(provider: ProviderConfig): string
    clamp?(body: string, n: number): string
    /** A body without a cap given `n`, where the cap is not a top-level member (Gemini's `generationConfig`). */
    fill?(body: string, n: number): string
  }
  /**
   * What translating this request would lose that passing it through keeps (Messages: thinking,
   * `cache_control`, an `anthropic-beta` header, ...), named; null when nothing. Such a request is
   * never made continuable, since a continuable stream is translated on every target.
   */
  lostInTranslation?(view: View, headers: Headers): string | null
  /**
   * A whole (non-stream) upstream answer, already read under the provider's timeouts and size cap →
   * the client's body and the usage to record.
   */
  relayJson(text: string, ctx: EncodeContext<View>): { body: string; usage: Usage | null }
  /**
   * Under a token or money limit (DESIGN §11): the cut at the output allowance on this pass-through.
   * Its items are the upstream's events as they came (`eventFrames`): one an item — or, from a
   * `relay` asked for `framed`, a read's complete events an item; it counts their generated
   * text into `allowance` and, at the allowance, ends the answer in the wire's own way (the events
   * of the refused item before the refused one first). `inputTokens`: the reservation's input
   * bound, for a usage the ending reports. `whole`: the gate reads a JSON answer, to be
   * `assemble`d (it may keep what it read for that; a stream's gate keeps nothing). Every
   * pass-through has one: under a limit a request keeps its byte relay (a stream that may be
   * rescued is translated on every route regardless).
   */
  cut(allowance: OutputAllowance, inputTokens: number, whole: boolean): CutGate<Uint8Array>
  /**
   * The gate takes a read's complete events as one item on a JSON answer too (`eventFrames(…,
   * batch)`), as its framed relay gives them: no object an event before the gate's own; else one
   * event an item.
   */
  readonly cutsReads?: boolean
  /**
   * With `cut`, a JSON request is streamed upstream (`streamed`: its body asking for a stream; or,
   * for an endpoint that cannot stream or a wire that asks for a stream in the path (Gemini's
   * `:streamGenerateContent`), the path and body of one that can) and the events the gate
   * let through (its ending included) are put together as the wire's JSON answer. Absent where
   * `request` makes that edit itself (`ForwardRequest.streamed`: chat's forwardBody).
   */
  streamed?(body: string, path: string): string | { path: string; body: string }
  assemble(events: Uint8Array[], ctx: EncodeContext<View>): { body: string; usage: Usage | null }
  /**
   * A whole answer (a 200 `application/json`, parsed) where events were asked for — an upstream
   * that ignores `stream` — as the wire's events it stands for, its text in small pieces
   * (`TextPieces`, as far as a cut may fall: `ctx.cutWithin`), so that the relay, the gate's cut at the allowance and `assemble` read it as
   * any stream (DESIGN §11: the text is cut at the allowance, not relayed whole). Throws the failure
   * an error body names, or 502 `upstream_invalid_response` when it is not the wire's answer.
   */
  events(json: unknown, ctx: CallContext): ReadableStream<Uint8Array>
  /**
   * A stream's relay: the upstream's answer (2xx headers) → the plan the writer reads it by and the
   * encoder that makes the client's bytes of it (a `ByteRelay`: events framed at the byte level, only
   * the ones that carry the model, usage or an error parsed). The relay runs in the writer's read,
   * so a failure in the first event is still an HTTP error. It may refuse the upstream's answer
   * first (a JSON body where events were expected). `framed` (under a limit, for the gate): the
   * plan yields a read's complete events, one an item or a read's an item, and the encoder relays them.
   */
  relay(
    upstream: Response,
    ctx: CallContext,
    encodeCtx: EncodeContext<View>,
    framed: boolean,
  ): Relayed | Promise<Relayed>
}

/** What every surface gives, whatever its operation: the steps before routing, and its errors. */
export interface SurfaceCore<View> {
  readonly name: SurfaceName
  /** The operation it serves: a model that does not answer it is refused (400 naming `model`). */
  readonly operation: Operation
  /** The body field that holds the input (`messages`, `input`): a context-cap refusal names it. */
  readonly inputParam: string
  /**
   * The caller's API key from the request headers (or `url`'s query, where the wire puts it there:
   * Gemini's `?key=`); throws 401 when there is none.
   */
  credential(headers: Headers, url?: string): string
  /**
   * Parses and validates a body; throws 400 `GatewayError`s whose `param` uses the surface's field
   * names. `limitsChecked`: the body reader already held `text` to the JSON structural limits.
   * `url`: the request's, for a wire whose path carries the model and method (Gemini's).
   * `named`: told the model the body (or `url`) names once it is read, before the rest is
   * checked: a request refused for the rest is still counted under it (prepare.ts).
   */
  decode(text: string, limitsChecked?: boolean, url?: string, named?: (model: unknown) => void): Decoded<View>
  /**
   * For a wire whose path names the method (Gemini's): throws 404 when `url` names one this
   * surface does not serve — checked before the body's type and size, as a route is.
   */
  checkRoute?(url: string): void
  /** The JSON structural limits its bodies are read under; absent: the gateway's (`json/limits.ts`). */
  readonly jsonLimits?: Readonly<JsonLimits>
  /** The surface's own rate-limit header names, added to OpenAI's: from the windows and the rows' states. */
  limitHeaders?(
    windows: Windows,
    states: RowState[] | undefined,
    now: number,
    into: Record<string, string>,
  ): void
  /** An error as a response in the surface's shape; `headers` are the response's headers so far. */
  errorResponse(err: GatewayError, headers: Record<string, string>): Response
}

/** A surface of the chat operation: the chat part (features, translation, completions, streams). */
export interface ChatSurface<View> extends SurfaceCore<View> {
  readonly operation: 'chat'
  /** Every catalogue feature the request uses, with the field (surface terms) that first uses it. */
  features(view: View): FeatureUse[]
  /**
   * The body the charge reads, when the view wraps it (absent: the view is the body), for the
   * request's routes' `entries` (what a route leaves out is not charged when every route does).
   */
  body?(view: View, entries: readonly Pick<CatalogueEntry, 'provider' | 'model'>[]): unknown
  /** The requested temperature, checked against the model's range. */
  temperature(view: View): number | null | undefined
  /**
   * The canonical request for the provider (defaults applied, `model` = upstream name). Runs
   * before admission, so it may refuse with a 400 (e.g. too many output tokens).
   */
  translate(view: View, entry: CatalogueEntry): Translated
  /** Runs before admission on pass-through too: limits the surface enforces whatever the route. */
  checkLimits?(view: View, entry: CatalogueEntry): void
  /** A completion → the response body (JSON-serialisable). */
  encodeCompletion(completion: ChatCompletion, ctx: EncodeContext<View>): unknown
  /** A fresh encoder for one translated stream. */
  streamEncoder(ctx: EncodeContext<View>): StreamEncoder<ChatCompletionChunk>
  /** Pass-through to providers of the surface's own wire; absent = always translate. */
  forward?: Forwarding<View>
}

/**
 * A surface of the embeddings operation. Answers are whole JSON bodies; a provider either takes
 * the canonical request (`ProviderAdapter.embeddings`) or the client's body as it is (`forward`).
 */
export interface EmbeddingsSurface<View> extends SurfaceCore<View> {
  readonly operation: 'embeddings'
  /** The canonical request for the provider (`model` = upstream name). */
  translate(view: View, entry: CatalogueEntry): EmbeddingRequest
  /** The inputs the model reads (its texts or token ids), whatever the route: what admission counts. */
  input(view: View): EmbeddingInput
  /**
   * The client's fields the canonical request has no place for (Gemini's `taskType`, `title`):
   * left out when the request is translated, and named in `x-switchyard-dropped-params`.
   */
  untranslated?(view: View): string[]
  /** Runs before admission on pass-through too: limits the surface enforces whatever the route. */
  checkLimits(view: View, entry: CatalogueEntry): void
  /** How large the answer legitimately is: its vectors, and their length when the request sets it. */
  answerShape(view: View): { items: number; dimensions: number | null }
  /** A provider's vectors → the response body text. */
  encode(result: EmbeddingResult, ctx: EncodeContext<View>): string
  /** Pass-through to providers of the surface's own wire. */
  forward: {
    kind: ProviderKind
    /**
     * The upstream calls, sent one after another: one, or a batch past the provider's own limit
     * in parts (Gemini takes at most 100 requests a batch).
     */
    requests(view: View, entry: CatalogueEntry, bodyText: string): ForwardRequest[]
    /**
     * The upstreams' whole answers, one per request in order (each read under the provider's
     * timeouts and size cap) → the client's body and usage.
     */
    relayJson(texts: readonly string[], ctx: EncodeContext<View>): { body: string; usage: EmbeddingUsage }
  }
}

/**
 * A surface of the count_tokens operation. Not admitted (operations/count-tokens.ts): it spends no
 * request from the limits and records no usage; after the steps every keyed request shares (auth,
 * body, route, the model's operation, plan) its own throttle applies, then it answers.
 */
export interface CountTokensSurface<View> extends SurfaceCore<View> {
  readonly operation: 'count_tokens'
  /** Throws 429 when this key called too often. Runs after the plan check. */
  throttle(keyId: string): void
  /** The answer: counted upstream through `adapter`, or by the gateway. */
  count(
    view: View,
    entry: CatalogueEntry,
    adapter: ProviderAdapter,
    ctx: CallContext,
    request: Request,
    headers: Record<string, string>,
  ): Promise<Response>
}

/** Any surface: which part it carries follows from its operation. */
export type Surface<View> = ChatSurface<View> | EmbeddingsSurface<View> | CountTokensSurface<View>
