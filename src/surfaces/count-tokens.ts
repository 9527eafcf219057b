/**
 * @module
 * The surfaces' token-counting endpoints (`POST /v1/messages/count_tokens`,
 * `POST /v1/responses/input_tokens`) as one surface built from what each says of its own
 * (`countTokensSurface`): how it reads a body, how a provider that can counts it upstream, how the
 * gateway counts it otherwise, and its answer's shape. Shared: the per-key throttle,
 * never admitted against the limits, the header that says how a count was made, and the gateway's
 * own count of a request in the chat form, used for providers that cannot count upstream. That
 * count is o200k's (GPT-4o's encoding, limits/o200k.ts: tiktoken's counts, which are
 * gpt-tokenizer's `o200k_base`, the name the header keeps, but for text with U+FEFF): an estimate
 * for other models' tokenizers. Each call
 * counts at most `EXACT_CHARS` characters and about `EXACT_TOKENS` tokens exactly; the rest is
 * extrapolated.
 *
 * @example
 * const tokens = await estimateChatTokens(request.messages, request.tools)
 */

import type { CatalogueEntry } from '../catalogue/entry.ts'
import { countO200k, type O200kCounter } from '../limits/o200k.ts'
import { SlidingLog } from '../limits/sliding-log.ts'
import type { ChatMessage, FunctionTool } from '../operations/chat.ts'
import { TOKEN_COUNT_HEADER } from '../pipeline/operations/embeddings.ts'
import type { CountTokensSurface, SurfaceCore } from '../pipeline/surface.ts'
import { readText } from '../providers/http.ts'
import type { ForwardCall } from '../providers/types.ts'
import { GatewayError } from '../util/errors.ts'

/** How a count was made (`TOKEN_COUNT_HEADER`): `upstream`, or `estimate; tokenizer=…` when the gateway counted. */
const ESTIMATE_VALUE = 'estimate; tokenizer=gpt-tokenizer o200k_base'

/** What one token-counting endpoint says of its own; `countTokensSurface` builds the rest. */
export interface CountTokensSpec<View> extends Omit<SurfaceCore<View>, 'operation'> {
  /** The endpoint as the throttle's 429 names it (`count_tokens`, `responses/input_tokens`). */
  endpoint: string
  /** The call that counts `view` at `entry`'s provider, or null when the gateway counts it. */
  upstream(view: View, entry: CatalogueEntry, request: Request): ForwardCall | null
  /** The gateway's own count: `estimateChatTokens` of the chat request `view` would be. */
  estimate(view: View, entry: CatalogueEntry): Promise<number>
  /** The answer's body for a count the gateway made. */
  answer(inputTokens: number): Record<string, unknown>
}

/**
 * A count_tokens surface: a valid key and a chat model the plan includes, never admitted against
 * the account's limits, at most `perSecond` calls per key per second. A provider that can counts
 * upstream (its body returned as it is, read under its timeouts and `max_response_bytes`); for
 * every other the gateway counts, and `TOKEN_COUNT_HEADER` says which it was.
 */
export function countTokensSurface<View>(
  spec: CountTokensSpec<View>,
  perSecond: number,
): CountTokensSurface<View> {
  const { endpoint, upstream, estimate, answer, ...core } = spec
  const throttle = new CountTokensThrottle(perSecond, endpoint)
  const json = (headers: Record<string, string>, how: string) => ({
    headers: { ...headers, 'content-type': 'application/json', [TOKEN_COUNT_HEADER]: how },
  })
  return {
    ...core,
    operation: 'count_tokens',
    throttle: (keyId) => throttle.take(keyId, performance.timeOrigin + performance.now()),
    async count(view, entry, adapter, ctx, request, headers) {
      const call = upstream(view, entry, request)
      if (call) {
        const counted = await readText(await adapter.forward!(call, ctx), ctx)
        return new Response(counted, json(headers, 'upstream'))
      }
      return new Response(JSON.stringify(answer(await estimate(view, entry))), json(headers, ESTIMATE_VALUE))
    },
  }
}

/**
 * Keys whose calls the throttle remembers at once: each holds `perSecond` times (20 × 8 bytes), so
 * a client cycling keys costs at most about 3 MB however many it has.
 */
const THROTTLE_KEYS = 10_000

/** Per key, per process: at most `perSecond` calls in any second (a sliding window, `SlidingLog`). */
class CountTokensThrottle {
  private readonly log: SlidingLog

  /** `endpoint` names the endpoint in the 429's message (`count_tokens`, `responses/input_tokens`). */
  constructor(
    private readonly perSecond: number,
    private readonly endpoint: string,
  ) {
    this.log = new SlidingLog({ limit: perSecond, windowMs: 1000, maxKeys: THROTTLE_KEYS })
  }

  /** Throws 429 when the key made `perSecond` calls in the last second. */
  take(keyId: string, nowMs: number): void {
    const waitMs = this.log.take(keyId, nowMs)
    if (waitMs > 0) {
      throw new GatewayError(
        429,
        'count_tokens_throttled',
        `${this.endpoint} is limited to ${this.perSecond} calls per second per key; retry in ${waitMs} ms.`,
        { headers: { 'retry-after': String(Math.ceil(waitMs / 1000)), 'retry-after-ms': String(waitMs) } },
      )
    }
  }
}

/**
 * Tokens of everything the model would read: each message's text and tool calls, tool results,
 * tool definitions (name, description, JSON schema) and the system prompt, plus OpenAI's
 * documented framing overhead of 3 tokens per message and 3 for the reply's priming, and
 * `IMAGE_ESTIMATE` for each image (in a message or a tool result).
 */
export async function estimateChatTokens(
  messages: readonly ChatMessage[],
  tools: readonly FunctionTool[] = [],
): Promise<number> {
  const count = new BoundedCount(countO200k)
  let total = 3
  for (const message of messages) {
    total += 3 + IMAGE_ESTIMATE * imagesIn(message)
    count.add(messageText(message))
  }
  for (const tool of tools) count.add([JSON.stringify(tool.function)])
  return total + count.tokens()
}

/**
 * What one call counts exactly; the rest is extrapolated at the tokens per character measured on
 * what was counted (an estimate either way, as the header says). Byte-pair encoding costs per
 * token, and more on text nothing in its cache matches: 64 K characters of this repository's
 * English took 11 ms (17,457 tokens), of random letters 66 ms (34,000), of random CJK 170 ms
 * (118,000), and a 9 MB body 0.8–1 s uncounted, where a chat request of that size costs
 * milliseconds. So a call counts at most `EXACT_CHARS` characters and stops after the slice that
 * passes `EXACT_TOKENS` tokens: about 16 ms of tokenizing at most, whatever it is sent.
 */
const EXACT_CHARS = 65_536
const EXACT_TOKENS = 8_192

/** Exact counts for the first characters (within both bounds), the rest extrapolated. */
class BoundedCount {
  private exactChars = 0
  private exactTokens = 0
  private restChars = 0

  constructor(private readonly count: O200kCounter) {}

  /**
   * One text given as its pieces, counted as their concatenation. Only the head that is counted
   * exactly is joined: joining a 9 MB message whole (`role + content`) and slicing it flattened a
   * 9 MB copy per request, which made count_tokens cost twice a chat request's memory (issue 42).
   */
  add(pieces: readonly string[]): void {
    let length = 0
    for (const piece of pieces) length += piece.length
    const room = EXACT_CHARS - this.exactChars
    const tokensLeft = EXACT_TOKENS - this.exactTokens
    if (room <= 0 || tokensLeft <= 0) {
      this.restChars += length
      return
    }
    let head = ''
    for (const piece of pieces) {
      if (head.length >= room) break
      head += piece.length <= room - head.length ? piece : piece.slice(0, room - head.length)
    }
    const counted = this.count(head, tokensLeft)
    this.exactChars += counted.chars
    this.exactTokens += counted.tokens
    this.restChars += length - counted.chars
  }

  tokens(): number {
    if (this.restChars === 0) return this.exactTokens
    const perChar = this.exactChars > 0 ? this.exactTokens / this.exactChars : 0.25
    return this.exactTokens + Math.ceil(this.restChars * perChar)
  }
}

/**
 * An image's tokens, whatever its size: Claude's documented cost of a 1092×1092 image (about
 * 1,590; OpenAI's high detail 1,445, Gemini 258–1,120). The admission's bound is larger
 * (limits/estimate-tokens.ts `IMAGE_TOKENS`, the most any provider bills): this is an estimate of
 * what the model reads, not a bound.
 */
export const IMAGE_ESTIMATE = 1_600

function imagesIn(message: ChatMessage): number {
  const content = message.content
  if (!Array.isArray(content)) return 0
  let n = 0
  for (const part of content) if (part.type === 'image_url') n++
  return n
}

/** The message's text as pieces, in order (`BoundedCount.add` joins no more of them than it counts). */
function messageText(message: ChatMessage): string[] {
  const pieces: string[] = [message.role]
  const content = message.content
  if (typeof content === 'string') pieces.push(content)
  else if (Array.isArray(content)) {
    for (const part of content) if (part.type === 'text') pieces.push(part.text)
  }
  for (const call of message.tool_calls ?? []) pieces.push(call.function.name, call.function.arguments)
  return pieces
}
