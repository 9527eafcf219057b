/**
 * @module
 * `POST /v1/messages/count_tokens`, the count_tokens operation's surface on the pipeline. Needs a
 * valid key and a chat model the plan includes, but is not admitted against the account's limits
 * (it declares so); its own throttle (per key, per second) keeps it cheap.
 * Anthropic providers answer it upstream (body passed through, model swapped). For every other
 * kind the gateway counts with gpt-tokenizer's `o200k_base` encoding (GPT-4o's, limits/o200k.ts):
 * an estimate for other models' tokenizers, said so in the `x-switchyard-token-count` response
 * header. Each call counts at most `EXACT_CHARS` characters and about `EXACT_TOKENS` tokens
 * exactly; the rest is extrapolated.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { apiKeyOrBearer } from '../../auth/authenticate.ts'
import { type O200kCounter, o200kCounter } from '../../limits/o200k.ts'
import type { CountTokensSurface } from '../../pipeline/surface.ts'
import { readText } from '../../providers/http.ts'
import type { ChatMessage } from '../../providers/types.ts'
import { GatewayError } from '../../util/errors.ts'
import { parseChatBody, validateWith } from '../chat/validate.ts'
import { convertConversation } from './convert-to-chat-request.ts'
import { messagesErrorResponse } from './errors.ts'
import { forwardBody, forwardHeaders } from './pass-through.ts'
import { type CountTokensRequest, CountTokensRequestSchema, checkToolNames } from './request-schema.ts'

const checker = TypeCompiler.Compile(CountTokensRequestSchema)

const EXAMPLE = '{"model": "<prefix>/<model>", "messages": [{"role": "user", "content": "Hello"}]}'

export const ESTIMATE_HEADER = 'x-switchyard-token-count'

/** Per key, per process: at most `perSecond` calls in any one-second slot. */
export class CountTokensThrottle {
  private slot = 0
  private readonly counts = new Map<string, number>()

  constructor(private readonly perSecond: number) {}

  /** Throws 429 once the key used up this second's calls. */
  take(keyId: string, nowMs: number): void {
    const slot = Math.floor(nowMs / 1000)
    if (slot !== this.slot) {
      this.slot = slot
      this.counts.clear()
    }
    const used = (this.counts.get(keyId) ?? 0) + 1
    this.counts.set(keyId, used)
    if (used > this.perSecond) {
      throw new GatewayError(
        429,
        'count_tokens_throttled',
        `count_tokens is limited to ${this.perSecond} calls per second per key; retry in a second.`,
        { headers: { 'retry-after': '1' } },
      )
    }
  }
}

/** The count_tokens surface, with its own throttle of `perSecond` calls per key. */
export function countTokensSurface(perSecond: number): CountTokensSurface<CountTokensRequest> {
  const throttle = new CountTokensThrottle(perSecond)
  return {
    name: 'messages',
    inputParam: 'messages',
    operation: 'count_tokens',
    admitted: false,
    credential: apiKeyOrBearer,
    decode(text, limitsChecked) {
      const view = validateWith(checker, parseChatBody(text, EXAMPLE, limitsChecked))
      checkToolNames(view)
      return { model: view.model, view, stream: false }
    },
    throttle: (keyId) => throttle.take(keyId, performance.timeOrigin + performance.now()),
    async count(view, entry, adapter, ctx, request, headers) {
      if (entry.provider.kind === 'anthropic') {
        const upstream = await adapter.forward!(
          {
            path: '/v1/messages/count_tokens',
            body: forwardBody(view, entry),
            headers: forwardHeaders(request.headers),
          },
          ctx,
        )
        // Read under the provider's timeouts and max_response_bytes, like every upstream body.
        return new Response(await readText(upstream, ctx), {
          headers: { ...headers, 'content-type': 'application/json', [ESTIMATE_HEADER]: 'upstream' },
        })
      }
      const inputTokens = await estimateTokens(view)
      return new Response(JSON.stringify({ input_tokens: inputTokens }), {
        headers: {
          ...headers,
          'content-type': 'application/json',
          [ESTIMATE_HEADER]: 'estimate; tokenizer=gpt-tokenizer o200k_base',
        },
      })
    },
    errorResponse: messagesErrorResponse,
  }
}

/**
 * Tokens of everything the model would read: each message's text and tool calls, tool results,
 * tool definitions (name, description, JSON schema) and the system prompt, plus OpenAI's
 * documented framing overhead of 3 tokens per message and 3 for the reply's priming, and
 * `IMAGE_ESTIMATE` for each image (in a message or a tool result).
 */
export async function estimateTokens(view: CountTokensRequest): Promise<number> {
  const conversation = convertConversation(view)
  const count = new BoundedCount(await o200kCounter())
  let total = 3
  for (const message of conversation.messages) {
    total += 3 + IMAGE_ESTIMATE * imagesIn(message)
    count.add(messageText(message))
  }
  for (const tool of conversation.tools ?? []) count.add(JSON.stringify(tool.function))
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
export const EXACT_CHARS = 65_536
export const EXACT_TOKENS = 8_192

/** Exact counts for the first characters (within both bounds), the rest extrapolated. */
class BoundedCount {
  private exactChars = 0
  private exactTokens = 0
  private restChars = 0

  constructor(private readonly count: O200kCounter) {}

  add(text: string): void {
    const room = EXACT_CHARS - this.exactChars
    const tokensLeft = EXACT_TOKENS - this.exactTokens
    if (room <= 0 || tokensLeft <= 0) {
      this.restChars += text.length
      return
    }
    const counted = this.count(text.length <= room ? text : text.slice(0, room), tokensLeft)
    this.exactChars += counted.chars
    this.exactTokens += counted.tokens
    this.restChars += text.length - counted.chars
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

function messageText(message: ChatMessage): string {
  let text = message.role
  const content = message.content
  if (typeof content === 'string') text += content
  else if (Array.isArray(content)) {
    for (const part of content) if (part.type === 'text') text += part.text
  }
  for (const call of message.tool_calls ?? []) text += call.function.name + call.function.arguments
  return text
}
