/**
 * @module
 * The `demo` provider kind: a deterministic local model that needs no network, so a fresh
 * checkout answers requests offline. It echoes the latest user message, calls tools, honours
 * JSON response formats, `n`, `stop` and `max_tokens`, and streams like OpenAI. A `flaky` model
 * fails on demand (`flaky.ts`), to show retries and fallbacks.
 *
 * @example
 * const demo = createDemoAdapter({ prefix: 'demo', kind: 'demo', models })
 * const res = await demo.complete({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] }, ctx)
 * res.choices[0].message.content // 'Echo: hi'
 */
import type { ModelConfig, ProviderConfig } from '../../config/schema.ts'
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, Usage } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { abortError } from '../http.ts'
import type { StreamPlan } from '../stream-plan.ts'
import type { CallContext, ProviderAdapter } from '../types.ts'
import { demoAnswer } from './answer.ts'
import { demoChunks } from './chunks.ts'
import { createDemoEmbeddings } from './embeddings.ts'
import { flakyFailure } from './flaky.ts'
import { promptTokens } from './text.ts'

export function createDemoAdapter(provider: ProviderConfig): ProviderAdapter {
  return {
    async complete(req: ChatRequest, ctx: CallContext): Promise<ChatCompletion> {
      const { prompt, answer, n } = answerFor(req, ctx)
      const message: ChatCompletion['choices'][number]['message'] = {
        role: 'assistant',
        content: answer.content,
        refusal: null,
      }
      if (answer.toolCalls.length > 0) message.tool_calls = answer.toolCalls
      return {
        id: `chatcmpl-${ctx.requestId}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: req.model,
        choices: Array.from({ length: n }, (_, index) => ({
          index,
          message: { ...message },
          finish_reason: answer.finishReason,
          logprobs: null,
        })),
        usage: usage(prompt, answer.completionTokens * n),
      }
    },

    /** A plan without stages: its body yields the chunks themselves (no wire to parse). */
    async stream(req: ChatRequest, ctx: CallContext): Promise<StreamPlan<ChatCompletionChunk>> {
      const { prompt, answer, n } = answerFor(req, ctx)
      const head = {
        id: `chatcmpl-${ctx.requestId}`,
        created: Math.floor(Date.now() / 1000),
        model: req.model,
      }
      const chunks = demoChunks(head, answer, n, usage(prompt, answer.completionTokens * n))
      return { body: fromChunks(chunks, ctx.signal), stages: [], ctx }
    },

    embeddings: createDemoEmbeddings(provider),
  }
}

/** What both calls begin with: the client gone, a flaky failure, the window, then the answer. */
function answerFor(req: ChatRequest, ctx: CallContext) {
  if (ctx.signal.aborted) throw abortError(ctx.signal.reason)
  const failure = flakyFailure(req)
  if (failure) throw failure
  const prompt = withinWindow(req, ctx.model)
  return { prompt, answer: demoAnswer(req, ctx.model.max_output_tokens), n: req.n ?? 1 }
}

/**
 * The prompt's tokens by the demo's own count (the usage it reports), held to the model's
 * `context_window` as a real provider holds a prompt to its model's: 400 `context_length_exceeded`
 * naming `messages` (which fails over only to a fallback with a larger window, DESIGN §10).
 */
function withinWindow(req: ChatRequest, model: ModelConfig): number {
  const prompt = promptTokens(req.messages)
  if (prompt <= model.context_window) return prompt
  throw new GatewayError(
    400,
    'context_length_exceeded',
    `This model's maximum context length is ${model.context_window} tokens; the messages have ${prompt} (the demo counts about 4 characters a token). Shorten the conversation.`,
    { param: 'messages' },
  )
}

function usage(prompt: number, completion: number): Usage {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

/**
 * One chunk per read, made when it is read (backpressure: a client that stops reading stops the
 * generator); stops with the abort error once `signal` fires.
 */
function fromChunks(
  chunks: Iterator<ChatCompletionChunk>,
  signal: AbortSignal,
): ReadableStream<ChatCompletionChunk> {
  return new ReadableStream<ChatCompletionChunk>(
    {
      pull(controller) {
        if (signal.aborted) return controller.error(abortError(signal.reason))
        const next = chunks.next()
        if (next.done) controller.close()
        else controller.enqueue(next.value)
      },
    },
    { highWaterMark: 0 },
  )
}
