/**
 * @module
 * The input-token bound that admission reserves and the plan's context cap checks (DESIGN §11
 * "Tight, not conservative"): never below what the upstream will bill for the request's input,
 * on the project's corpus, whatever model of the route answers, and cheap on the hot path.
 *
 * The bound is the sum, for the tokenizer family of each model that may answer (text-bound.ts), of:
 * - each message's text (every string in it, and tool-call inputs as their JSON), bounded by
 *   `shapeBound`, plus a template per message: OpenAI's documented 3 (+1 for a `name`) and 3 to
 *   prime the reply on its own encodings (o200k and cl100k alike; none on its embedding models,
 *   which bill each input's tokens); `TEMPLATE_TOKENS` elsewhere (Llama 3's header is 5, Claude's
 *   turn 3–5);
 * - each tool definition and JSON-schema output as its JSON text (OpenAI renders them more
 *   tersely; Anthropic adds its hidden tool-use prompt, `TOOL_PROMPT_TOKENS`);
 * - what the text cannot show: each image ({@link IMAGE_TOKENS}: its URL or base64 is not counted
 *   as text), each file or document beyond its text ({@link FILE_TOKENS}), each provider-run
 *   tool ({@link SERVER_TOOL_TOKENS}). Beyond the bound, and said so in the README: a multi-page
 *   PDF can cost more than `FILE_TOKENS` + its text; OpenAI bills gpt-4o-mini images at 33×;
 *   server tools add the results they fetch. Settlement charges what was billed.
 *
 * Texts are shaped once (text-bound.ts keeps shapes by hash: a conversation's prefix resent every
 * turn is not encoded again) and large new ones yield to the event loop while encoded.
 */
import type { ProviderKind } from '../config/schema-providers.ts'
import {
  type Family,
  familyOf,
  isOpenAIEncoding,
  shapeBound,
  shapeOf,
  shapeOfAsync,
  type TextShape,
  YIELD_CHARS,
} from './text-bound.ts'

/** A provider's hidden system prompt for tool use or a JSON schema output (Anthropic: 313-530). */
export const TOOL_PROMPT_TOKENS = 600
/** OpenAI's framing of a tool list or a response schema (its `namespace functions {…}` wrapper). */
export const OPENAI_TOOL_TOKENS = 16
/** A provider-run tool's own definition and prompt (Anthropic's computer use: 735 + 499). */
export const SERVER_TOOL_TOKENS = 2_000
/** One image, whatever its size (Claude's largest ~4,800; OpenAI high detail 1,445; Gemini 1,120). */
export const IMAGE_TOKENS = 5_000
/** One file or document part, beyond its bytes (a PDF page is up to ~4,600 on Claude). */
export const FILE_TOKENS = 10_000

const IMAGE_TYPES = new Set(['image_url', 'image', 'input_image'])
const FILE_TYPES = new Set(['file', 'document', 'input_file'])
/** Tool entries that the client runs (the model only sees their schema, already in the bytes). */
const CLIENT_TOOL_TYPES = new Set(['function', 'custom'])

/**
 * A charged body's member (a symbol: never counted as text, never sent) naming the first field
 * whose input the gateway cannot count — bytes it never sees, such as a Gemini file by URI or a
 * cached context. Under a token or money limit such a request is refused naming it (charge.ts).
 */
export const UNCOUNTED_INPUT: unique symbol = Symbol('uncounted input')

/**
 * A tool entry's member (a symbol: never counted as text, never sent): how many provider-run tools
 * it holds when their kind is not a `type` string — Gemini's built-ins (`{"googleSearch": {}}`) —
 * each given the server-tool allowance, not a client tool's nothing.
 */
export const SERVER_TOOL: unique symbol = Symbol('server tool')

/** A model that may answer the request: its provider's kind and upstream model name. */
export interface InputTarget {
  kind: ProviderKind
  model: string
}

/** Template tokens per message (and once to prime the reply) outside OpenAI's own models. */
export const TEMPLATE_TOKENS = 8

export interface InputBound {
  /** The bound: reserve this many input tokens (the largest over the targets' families). */
  tokens: number
  /**
   * The text's part of `tokens`, without the allowances for images, files and server tools (a
   * plan's `max_context_tokens` is checked against it: an allowance is what no provider bills
   * more than, far above what a small image costs, so it must not refuse a request that fits).
   */
  text: number
  /** The family whose bound that is. */
  family: Family
  images: number
  files: number
  serverTools: number
  /** A hidden tool-use or structured-output prompt was allowed for. */
  toolPrompt: boolean
}

/** Parts whose strings are not text the model reads (an image's URL or base64). */
const SKIPPED_PARTS = IMAGE_TYPES
/** Members whose object value is text the model reads as JSON (tool-call inputs, schemas). */
const JSON_MEMBERS = new Set(['input', 'args', 'arguments', 'parameters', 'schema', 'input_schema'])
/** Top-level members read as messages (each one message); tools and outputs are read apart. */
const MESSAGE_LISTS = ['messages', 'input', 'contents']
const SINGLE_MESSAGES = ['system', 'instructions']

interface Seen {
  images: number
  files: number
  numbers: number
}

/**
 * A message of strings only (`{ role, content }`, a `name`), no `type`: its text as `messageText`
 * would join it — the walk below takes an object's members last first — without the walk's stack
 * and list; null for any other message. Most messages of a conversation are of this shape.
 */
function stringsOnlyText(message: object): string | null {
  let text: string | null = null
  const o = message as Record<string, unknown>
  for (const k in o) {
    const v = o[k]
    if (typeof v === 'string') {
      if (k === 'type') return null
      text = text === null ? v : `${v}\n${text}`
    } else if (v !== null && v !== undefined && typeof v !== 'boolean') return null
  }
  return text ?? ''
}

/** A message's text: its strings and its tool inputs' JSON, counting images and files on the way. */
function messageText(message: unknown, seen: Seen): string {
  if (typeof message === 'string') return message
  if (message !== null && typeof message === 'object' && !Array.isArray(message)) {
    const flat = stringsOnlyText(message)
    if (flat !== null) return flat
  }
  const texts: string[] = []
  const stack: unknown[] = [message]
  while (stack.length) {
    const v = stack.pop()
    if (typeof v === 'string') texts.push(v)
    // Token ids (embeddings' input) are a token each.
    else if (typeof v === 'number') seen.numbers++
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push(v[i])
    else if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>
      if (typeof o.type === 'string') {
        if (SKIPPED_PARTS.has(o.type)) {
          seen.images++
          continue
        }
        if (FILE_TYPES.has(o.type)) seen.files++
      }
      for (const k in o) {
        const c = o[k]
        if (c !== null && typeof c === 'object' && JSON_MEMBERS.has(k) && !Array.isArray(c))
          texts.push(JSON.stringify(c))
        else if (k !== 'type') stack.push(c)
      }
    }
  }
  return texts.join('\n')
}

/**
 * The input bound of a request, on any surface (chat, messages, responses).
 * @param body the parsed body (the same value the pipeline validated).
 * @param targets every model that may answer (the primary and its fallbacks).
 *
 * @example
 * await inputTokenBound({ model: 'p/m', messages: [{ role: 'user', content: 'hello' }] },
 *   [{ kind: 'openai', model: 'gpt-4o' }]) // → { tokens: 9, family: 'o200k', ... } (user, \n, hello + 3 + 3)
 */
export function inputTokenBound(
  body: unknown,
  targets: readonly InputTarget[],
): InputBound | Promise<InputBound> {
  const top = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>
  const seen: Seen = { images: 0, files: 0, numbers: 0 }
  const texts: string[] = []
  // Messages framed by a template: each object of a list, and a top-level string or system
  // prompt (an embeddings input's strings and token ids are not messages).
  let messages = 0
  let named = 0
  for (const k of MESSAGE_LISTS) {
    const list = top[k]
    if (typeof list === 'string') {
      texts.push(list)
      messages++
    } else if (Array.isArray(list))
      for (const m of list) {
        if (m !== null && typeof m === 'object' && !Array.isArray(m)) {
          messages++
          if (typeof (m as { name?: unknown }).name === 'string') named++
        }
        texts.push(messageText(m, seen))
      }
  }
  for (const k of SINGLE_MESSAGES)
    if (top[k] != null) {
      texts.push(messageText(top[k], seen))
      messages++
    }
  // Tools (resent every turn: kept apart so their shape is reused), then every other member's
  // JSON text (schema outputs, and whatever else a provider may read).
  const rest: Record<string, unknown> = {}
  for (const k in top)
    if (k !== 'model' && k !== 'tools' && !MESSAGE_LISTS.includes(k) && !SINGLE_MESSAGES.includes(k))
      rest[k] = top[k]
  if (top.tools !== undefined) texts.push(JSON.stringify(top.tools))
  for (const _ in rest) {
    texts.push(JSON.stringify(rest))
    break
  }
  // Synchronous (no promise, no turn) unless a text is long enough to yield while encoded: a
  // request of known messages costs a hash and a lookup each.
  let slow = false
  for (let i = 0; i < texts.length && !slow; i++) slow = texts[i]!.length > YIELD_CHARS
  if (!slow) {
    const shapes: TextShape[] = []
    for (const t of texts) if (t.length) shapes.push(shapeOf(t))
    return boundOf(top, shapes, messages, named, seen, targets)
  }
  return (async () => {
    const shapes: TextShape[] = []
    for (const t of texts)
      if (t.length) shapes.push(t.length > YIELD_CHARS ? await shapeOfAsync(t) : shapeOf(t))
    return boundOf(top, shapes, messages, named, seen, targets)
  })()
}

/**
 * Tokenizer families by target (a regular expression's test apiece): the pipeline passes one
 * target object per catalogue entry (pipeline/charge.ts), so each is worked out once per catalogue.
 */
const FAMILIES = new WeakMap<InputTarget, Family>()

function familyFor(t: InputTarget): Family {
  let f = FAMILIES.get(t)
  if (f === undefined) {
    f = familyOf(t.kind, t.model)
    FAMILIES.set(t, f)
  }
  return f
}

/** OpenAI's own embedding models (all on cl100k): they bill each input's tokens, no template. */
const isOpenAIEmbedding = (t: InputTarget) => t.kind === 'openai' && /^text-embedding-/i.test(t.model)

/** The bound from the texts' shapes and what the walk counted, over every target's family. */
function boundOf(
  top: Record<string, unknown>,
  shapes: TextShape[],
  messages: number,
  named: number,
  seen: Seen,
  targets: readonly InputTarget[],
): InputBound {
  let serverTools = 0
  let clientTools = 0
  if (Array.isArray(top.tools)) {
    for (const t of top.tools) {
      const type = (t as { type?: unknown } | null)?.type
      const marked = (t as { [SERVER_TOOL]?: unknown } | null)?.[SERVER_TOOL]
      if (typeof marked === 'number') serverTools += marked
      else if (type === undefined || (typeof type === 'string' && CLIENT_TOOL_TYPES.has(type))) clientTools++
      else serverTools++
    }
  }
  if (Array.isArray(top.functions) && top.functions.length) clientTools++
  const toolPrompt = clientTools > 0 || serverTools > 0 || schemaOutput(top)
  // Each family once (a route's fallbacks mostly share the primary's).
  const families: Family[] = []
  for (const t of targets) {
    const f = familyFor(t)
    if (!families.includes(f)) families.push(f)
  }
  if (!families.length) families.push('any')
  // An embeddings request reaches embedding models only (config/check-resilience.ts): OpenAI's
  // encodings are then its embedding models' (all on cl100k; a chat request pays no test).
  const embedding = families.includes('cl100k') && targets.some(isOpenAIEmbedding)
  let best: { tokens: number; family: Family } | null = null
  for (const family of families) {
    let tokens = 0
    for (const s of shapes) tokens += shapeBound(s, family)
    if (!isOpenAIEncoding(family))
      tokens += TEMPLATE_TOKENS * (messages + 1) + (toolPrompt ? TOOL_PROMPT_TOKENS : 0)
    else if (!embedding) tokens += 3 * messages + named + 3 + (toolPrompt ? OPENAI_TOOL_TOKENS : 0)
    if (!best || tokens > best.tokens) best = { tokens, family }
  }
  const allowances =
    seen.numbers + serverTools * SERVER_TOOL_TOKENS + seen.images * IMAGE_TOKENS + seen.files * FILE_TOKENS
  return {
    tokens: best!.tokens + allowances,
    text: best!.tokens + seen.numbers,
    family: best!.family,
    images: seen.images,
    files: seen.files,
    serverTools,
    toolPrompt,
  }
}

/**
 * A JSON-schema output: chat's `response_format`, Responses' `text.format`, Messages'
 * `output_config.format` (or the beta's `output_format`).
 */
function schemaOutput(top: Record<string, unknown>): boolean {
  const typeOf = (v: unknown) =>
    v !== null && typeof v === 'object' ? (v as { type?: unknown }).type : undefined
  if (typeOf(top.response_format) === 'json_schema') return true
  if (typeOf(top.output_format) === 'json_schema') return true
  const config = top.output_config
  if (
    config !== null &&
    typeof config === 'object' &&
    typeOf((config as { format?: unknown }).format) === 'json_schema'
  )
    return true
  const text = top.text
  return (
    text !== null &&
    typeof text === 'object' &&
    typeOf((text as { format?: unknown }).format) === 'json_schema'
  )
}
