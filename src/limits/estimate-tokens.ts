/**
 * @module
 * The input-token bound that admission reserves (DESIGN §11): never below what the upstream will
 * bill for the request's input, whatever model serves it, and cheap on the hot path.
 *
 * **The bound is the body's UTF-8 byte length**, plus fixed allowances for what the body names but
 * does not contain. Why bytes, and not a tokenizer or bytes/N (measured on the corpus in
 * `test/support/token-corpus.ts`; `bun scripts/bench/estimate-tokens.ts` prints the figures):
 * - Every tokenizer behind the gateway is byte-level BPE or SentencePiece with byte fallback, so
 *   a token covers at least one byte of text: text tokens <= text bytes. The worst kinds reach
 *   that: random digits are one token per byte on Gemini and Llama, spaced digits on every
 *   tokenizer, CJK Extension B and rare emoji almost so. bytes/2 and bytes/3 fail on those (and on
 *   hex, base64, random CJK, random ASCII); no divisor above 1 holds for every text.
 * - gpt-tokenizer's o200k count is exact for OpenAI models only: Claude needs 1.8x it for Korean
 *   and 3.8x for Hindi, Gemini 3x for digits, and Anthropic's hidden tool-use prompt puts the
 *   guide's weather request at 403 tokens against o200k's 90 for the whole body. It also costs
 *   milliseconds per 64 KB, and more on hostile text (long runs, random CJK).
 * - Chat templates add a few tokens per message (OpenAI: 3, and 3 to prime the reply); each
 *   message's JSON wrapper (`{"role":"user","content":""}`, 28 bytes) is larger. Tool schemas are
 *   text in the body and so counted.
 * - What the bytes cannot show is added: a provider's hidden tool-use or structured-output system
 *   prompt ({@link TOOL_PROMPT_TOKENS}: Anthropic documents up to 530), each server-side tool's
 *   definition ({@link SERVER_TOOL_TOKENS}), each image ({@link IMAGE_TOKENS}: a URL is 40 bytes
 *   but Claude bills up to ~4,800 tokens for a large image) and each file or document
 *   ({@link FILE_TOKENS}). Beyond the bound, and said so in the README: a multi-page PDF can cost
 *   more than `FILE_TOKENS` + its bytes; OpenAI bills gpt-4o-mini images at 33x; server tools
 *   (web search, code execution) add the results they fetch. Settlement charges what was billed.
 *
 * The walk visits each JSON node once (no recursion, no string scanning), so a hostile body costs
 * what a valid one of its size does; JSON.parse, already paid by the pipeline, costs more.
 */

/** A provider's hidden system prompt for tool use or a JSON schema output (Anthropic: 313-530). */
export const TOOL_PROMPT_TOKENS = 600
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

export interface InputBound {
  /** The bound: reserve this many input tokens. */
  tokens: number
  bytes: number
  images: number
  files: number
  serverTools: number
  /** A hidden tool-use or structured-output prompt was allowed for. */
  toolPrompt: boolean
}

/**
 * The input bound of a request, on any surface (chat, messages, responses).
 * @param bodyBytes the body's size in bytes as received (`Content-Length` or the bytes read).
 * @param body the parsed body (the same value the pipeline validated).
 *
 * @example
 * inputTokenBound(67, { model: 'm', messages: [{ role: 'user', content: 'hello' }] }).tokens // → 67
 */
export function inputTokenBound(bodyBytes: number, body: unknown): InputBound {
  let images = 0
  let files = 0
  const stack: unknown[] = [body]
  while (stack.length) {
    const v = stack.pop()
    if (Array.isArray(v)) {
      for (const item of v) if (item !== null && typeof item === 'object') stack.push(item)
    } else if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>
      if (typeof o.type === 'string') {
        if (IMAGE_TYPES.has(o.type)) images++
        else if (FILE_TYPES.has(o.type)) files++
      }
      for (const k in o) {
        const c = o[k]
        if (c !== null && typeof c === 'object') stack.push(c)
      }
    }
  }
  const top = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>
  let serverTools = 0
  let clientTools = 0
  if (Array.isArray(top.tools)) {
    for (const t of top.tools) {
      const type = (t as { type?: unknown } | null)?.type
      if (type === undefined || (typeof type === 'string' && CLIENT_TOOL_TYPES.has(type))) clientTools++
      else serverTools++
    }
  }
  if (Array.isArray(top.functions) && top.functions.length) clientTools++
  const toolPrompt = clientTools > 0 || serverTools > 0 || schemaOutput(top)
  const tokens =
    bodyBytes +
    (toolPrompt ? TOOL_PROMPT_TOKENS : 0) +
    serverTools * SERVER_TOOL_TOKENS +
    images * IMAGE_TOKENS +
    files * FILE_TOKENS
  return { tokens, bytes: bodyBytes, images, files, serverTools, toolPrompt }
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
