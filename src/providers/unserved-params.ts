/**
 * @module
 * What a translating provider kind does with the chat parameters its wire has no place for,
 * declared once per kind beside the parameter maps that say what it does translate. Nothing is
 * dropped in silence:
 * - a parameter the adapter reads is translated (`ANTHROPIC_PARAMS`, `GEMINI_PARAMS`, and the
 *   structural fields every adapter reads);
 * - one that would change the answer and has no counterpart (a penalty or `logit_bias` to
 *   Anthropic) is refused: 400 `unsupported_parameter` naming it, before admission;
 * - any other (bookkeeping such as `user`, `metadata`, `store`, `service_tier`, the prompt-cache
 *   hints; hints such as `seed`, `verbosity`, `prediction`; a key the schema does not know) is left
 *   out, and its name goes back in the `x-switchyard-dropped-params` response header;
 * - one read but not sent for this request (the effort of an Anthropic request that continues a
 *   tool loop: anthropic/anthropic-thinking.ts) is named there too.
 * A value equal to OpenAI's own default (`presence_penalty: 0`, `store: false`, ...) asks for
 * nothing the upstream does not do, and is neither refused nor named. Kinds without a declaration
 * take the request as it is (openai: an OpenAI-compatible API; demo).
 *
 * @example
 * const dropped = unservedParams(request, 'anthropic') // ['seed', 'prompt_cache_key']; removed from request
 */
import type { ProviderKind } from '../config/schema-providers.ts'
import type { ChatRequest } from '../operations/chat.ts'
import { GatewayError } from '../util/errors.ts'
import { clip } from '../util/text.ts'
import { thinkingLeftOut } from './anthropic/anthropic-thinking.ts'
import { ANTHROPIC_PARAMS } from './anthropic/convert-to-anthropic-request.ts'
import { GEMINI_PARAMS } from './gemini/convert-to-gemini-request.ts'
import type { ParamRule } from './shared/apply-param-map.ts'

const DROPPED_PARAMS_HEADER = 'x-switchyard-dropped-params'
/** Names the provider-run tools a model's `unsupported_tools: drop` left out (DESIGN §6). */
const DROPPED_TOOLS_HEADER = 'x-switchyard-dropped-tools'

interface KindParams {
  /** Chat parameters the adapter reads: translated, or used to decide what it sends. */
  reads: ReadonlySet<string>
  /** Parameters that change the answer and have no counterpart, with what the provider lacks. */
  refuses: Readonly<Record<string, string>>
}

/** Read by every translating adapter: the conversation, its tools, the stream switch, the effort. */
const STRUCTURAL = [
  'model',
  'messages',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'reasoning_effort',
]

const readsOf = (rules: readonly ParamRule[], more: string[]) =>
  new Set([...STRUCTURAL, ...more, ...rules.map((rule) => rule.param)])

const PENALTY = 'Anthropic has no repetition penalties'
const TOKEN_BIAS = 'token ids are those of an OpenAI tokenizer, and'

const KINDS: Partial<Record<ProviderKind, KindParams>> = {
  anthropic: {
    reads: readsOf(ANTHROPIC_PARAMS, ['max_tokens', 'max_completion_tokens', 'parallel_tool_calls']),
    refuses: {
      presence_penalty: PENALTY,
      frequency_penalty: PENALTY,
      logit_bias: `${TOKEN_BIAS} Anthropic has no token bias`,
    },
  },
  gemini: {
    reads: readsOf(GEMINI_PARAMS, []),
    refuses: { logit_bias: `${TOKEN_BIAS} Gemini has no token bias` },
  },
}

const isEmptyObject = (v: unknown) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0

/** OpenAI's own defaults (CreateChatCompletionRequest): sent, they ask for nothing. */
const OPENAI_DEFAULTS: Readonly<Record<string, (value: unknown) => boolean>> = {
  n: (v) => v === 1,
  presence_penalty: (v) => v === 0,
  frequency_penalty: (v) => v === 0,
  logit_bias: isEmptyObject,
  metadata: isEmptyObject,
  logprobs: (v) => v === false,
  store: (v) => v === false,
  parallel_tool_calls: (v) => v === true,
  service_tier: (v) => v === 'auto',
  verbosity: (v) => v === 'medium',
  modalities: (v) => Array.isArray(v) && v.length === 1 && v[0] === 'text',
  // Deprecated function calling turned off (`refuseOpenAIOnly` refuses it turned on).
  function_call: (v) => v === 'none',
}

/**
 * Whether `kind`'s adapter reads the chat parameter `param`. A kind without a declaration (openai,
 * demo) takes the request as it is: of a parameter that is not OpenAI's (`top_k`), no.
 */
export function kindReads(kind: ProviderKind, param: string): boolean {
  return KINDS[kind]?.reads.has(param) ?? false
}

/** How much of the header the names may fill: a client reads headers of 8 to 16 KB in all. */
const HEADER_NAMES_CHARS = 1000

/**
 * The response header that names what was dropped; none when nothing was (see `headerNames`).
 */
export function droppedParamsHeader(dropped: readonly string[]): Record<string, string> | undefined {
  return dropped.length ? { [DROPPED_PARAMS_HEADER]: headerNames(dropped) } : undefined
}

/** The response header that names the dropped provider-run tools (their types); none when none were. */
export function droppedToolsHeader(dropped: readonly string[]): Record<string, string> | undefined {
  return dropped.length ? { [DROPPED_TOOLS_HEADER]: headerNames(dropped) } : undefined
}

/**
 * Names a client chose (its keys, its hosted tools' types) as one header value. Each is clipped
 * (`clip`), with anything outside printable ASCII escaped as JSON escapes it (`\n`, `\u00e9`),
 * since a raw line break or a character past Latin-1 makes the header invalid and the response
 * fail; past `HEADER_NAMES_CHARS` the rest are counted, not named.
 *
 * @example headerNames(['web\nsearch', 'file_search']) // 'web\\nsearch, file_search'
 */
export function headerNames(names: readonly string[]): string {
  const shown: string[] = []
  let chars = 0
  for (const name of names) {
    const safe = headerSafe(clip(name, 64))
    if (chars + safe.length > HEADER_NAMES_CHARS) break
    shown.push(safe)
    chars += safe.length + 2
  }
  const more = names.length - shown.length
  return more > 0 ? [...shown, `... (${names.length} in all)`].join(', ') : shown.join(', ')
}

const headerSafe = (name: string) =>
  /^[\x20-\x7e]*$/.test(name)
    ? name
    : JSON.stringify(name)
        .slice(1, -1)
        .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

/**
 * Holds `req` to what `kind`'s wire carries: throws 400 `unsupported_parameter` for the first
 * parameter it refuses (named by `name`, the surface's terms for a chat field); removes the ones it
 * drops from `req` and returns their names, in request order.
 */
export function unservedParams(
  req: ChatRequest,
  kind: ProviderKind,
  name: (param: string) => string = (param) => param,
): string[] {
  const declared = KINDS[kind]
  if (!declared) return []
  const unread = Object.keys(req).filter((param) => {
    const value = req[param]
    if (declared.reads.has(param) || value === undefined || value === null) return false
    // Own keys only: a client's key may be named `__proto__` or `constructor`.
    return !(Object.hasOwn(OPENAI_DEFAULTS, param) && OPENAI_DEFAULTS[param]!(value))
  })
  for (const param of unread) {
    if (!Object.hasOwn(declared.refuses, param)) continue
    const lacks = declared.refuses[param]
    const field = name(param)
    throw new GatewayError(
      400,
      'unsupported_parameter',
      `${field} changes what the model writes, but ${lacks}: this model would answer as if it were not sent. Leave ${field} out (or send its default), or choose a model whose provider takes it.`,
      { param: field },
    )
  }
  for (const param of unread) delete req[param]
  const dropped = unread.map(name)
  // Read, but not sent this turn: Anthropic's thinking is left out of a tool loop's next step.
  if (kind === 'anthropic' && thinkingLeftOut(req)) dropped.push(name('reasoning_effort'))
  return dropped
}
