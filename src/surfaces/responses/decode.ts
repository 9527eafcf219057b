/**
 * @module
 * A validated Responses request → the canonical chat request the adapters take, plus what the
 * encoder and error messages need to speak Responses again: where each chat field came from (so a
 * feature check names `input[3].content[1]`, not `messages[4].content[1]`), which function belongs
 * to which namespace, which hosted tools were dropped.
 *
 * Translation choices (README "Decisions"): `instructions` becomes a leading system message;
 * reasoning items are left out (only the upstream that made them can read them); assistant
 * `function_call` items join the assistant message before them; `parallel_tool_calls: true` is
 * Responses' default and is not a request for the `parallel_tool_calls` feature;
 * `reasoning.effort` becomes `reasoning_effort`.
 *
 * @example
 * const d = decodeResponses(req)
 * d.chat.messages // [{ role: 'user', content: 'Hello' }]
 * d.param('messages[0].content[1]') // 'input[0].content[1]'
 */

import type { ChatMessage } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'
import type { ChatRequestInput } from '../shared/chat-request-schema.ts'
import { decodeInput, type Origin } from './decode-input.ts'
import type { ResponsesRequestInput } from './request-schema.ts'
import { type ChatTools, chatTools } from './tools.ts'

export interface DecodedResponses {
  /** The chat form; `model` is still the client's prefixed id. */
  chat: ChatRequestInput
  tools: ChatTools
  /**
   * What the chat form cannot carry (items and parts only OpenAI's Responses API reads, file ids,
   * hosted tool choices, ...), left out of `chat`: a translated route refuses the first, a
   * pass-through route sends the request as it came.
   */
  problems: GatewayError[]
  /** The Responses field behind a chat field name (for errors from the shared checks). */
  param(chatParam: string): string
  /** The input asks for a compaction (Codex's `compaction_trigger`): the answer carries a `compaction` item. */
  compacting: boolean
}

/** Top-level chat fields that have a different name on this surface. */
const TOP_LEVEL: Record<string, string> = {
  response_format: 'text.format',
  verbosity: 'text.verbosity',
  max_tokens: 'max_output_tokens',
  reasoning_effort: 'reasoning.effort',
}

export function decodeResponses(req: ResponsesRequestInput): DecodedResponses {
  const tools = chatTools(req.tools)
  const problems: GatewayError[] = [...tools.problems]
  const messages: ChatMessage[] = []
  const origins: Origin[] = []
  decodeInput(req, messages, origins, problems)

  const chat: ChatRequestInput = { model: req.model, messages: messages as ChatRequestInput['messages'] }
  if (req.stream != null) chat.stream = req.stream
  if (req.temperature != null) chat.temperature = req.temperature
  if (req.top_p != null) chat.top_p = req.top_p
  if (req.max_output_tokens != null) chat.max_tokens = req.max_output_tokens
  if (tools.functions.length > 0) chat.tools = tools.functions as ChatRequestInput['tools']
  const choice = toolChoice(req.tool_choice, problems)
  // Only beside tools: OpenAI's chat refuses a tool_choice without them, even "none". (A choice
  // that calls a tool came with tools, `validate.ts`; if only hosted ones, `translateView` decides.)
  if (choice !== undefined && chat.tools) chat.tool_choice = choice
  if (req.parallel_tool_calls === false && chat.tools) chat.parallel_tool_calls = false
  const format = req.text?.format
  if (format?.type === 'json_object') chat.response_format = { type: 'json_object' }
  else if (format?.type === 'json_schema') {
    const { name, schema, description, strict } = format
    chat.response_format = {
      type: 'json_schema',
      json_schema: {
        name,
        schema,
        ...(description ? { description } : {}),
        ...(strict != null ? { strict } : {}),
      },
    }
  }
  untranslatable(req, problems)
  // Same meaning under the chat name: OpenAI's chat completions take both.
  if (req.text?.verbosity != null) chat.verbosity = req.text.verbosity
  if (req.moderation != null) chat.moderation = req.moderation
  const effort = req.reasoning?.effort
  // `none` too: some models reason unless told not to (Gemini 2.5 Flash: `thinkingBudget: 0`).
  if (effort) chat.reasoning_effort = effort
  // Both chat parameters too, each under its own name: Anthropic's adapter reads both (the safety
  // identifier wins), Gemini's neither (each named where it is dropped, `unservedParams`).
  if (req.user) chat.user = req.user
  if (req.safety_identifier) chat.safety_identifier = req.safety_identifier

  const compacting =
    Array.isArray(req.input) && req.input.some((i) => (i as { type?: unknown }).type === 'compaction_trigger')
  return { chat, tools, problems, param: (p) => responsesParam(p, origins), compacting }
}

/**
 * The field asking for log probabilities (the `logprobs` feature), if one does: `top_logprobs` above
 * 0, or `include` naming them (`top_logprobs: 0` alone asks for none).
 */
export function logprobsParam(req: ResponsesRequestInput): 'top_logprobs' | 'include' | null {
  const top = req.top_logprobs
  if (typeof top === 'number' && top > 0) return 'top_logprobs'
  return req.include?.includes('message.output_text.logprobs') ? 'include' : null
}

/**
 * Top-level fields a chat upstream's answer cannot honour, and that would otherwise be dropped in
 * silence: a stored prompt template (only OpenAI expands it; the model would answer without its
 * instructions), log probabilities (a translated answer carries none) and Chat Completions
 * parameters sent here by mistake (`CHAT_ONLY`).
 *
 * The other `CreateResponse` fields the chat form leaves out change nothing the model writes:
 * the bookkeeping ones (`metadata`, echoed, `service_tier`, the prompt-cache hints, `truncation`,
 * `context_management`, `max_tool_calls`, `include` but logprobs) are named in
 * `x-switchyard-dropped-params` (`droppedFields`, unknown-fields.ts), but for those an `openai`
 * upstream's chat API takes as they are (`openaiChatFields`); `store`, `stream_options`
 * and `reasoning.summary` (a translated answer's reasoning comes back as a summary anyway) ask
 * for what a translated route does.
 */
function untranslatable(req: ResponsesRequestInput, problems: GatewayError[]): void {
  const onlyResponses = (param: string, what: string, instead: string) =>
    problems.push(
      new GatewayError(
        400,
        'unsupported_parameter',
        `${param} ${what}, which only OpenAI's Responses API serves, and this model's upstream does not speak it. ${instead}, or choose a model whose provider has wire: responses.`,
        { param },
      ),
    )
  if (req.prompt !== undefined && req.prompt !== null) {
    onlyResponses(
      'prompt',
      'refers to a prompt template stored at OpenAI',
      'Send its text as "instructions" and "input"',
    )
  }
  const logprobs = logprobsParam(req)
  if (logprobs) onlyResponses(logprobs, 'asks for log probabilities', 'Leave it out')
  for (const [param, instead] of Object.entries(CHAT_ONLY)) {
    if (req[param] === undefined) continue
    problems.push(
      new GatewayError(
        400,
        'unknown_parameter',
        `${param} is a Chat Completions parameter, not one of the Responses API (OpenAI refuses it here), and this route would drop it. ${instead}.`,
        { param },
      ),
    )
  }
}

/**
 * Chat Completions parameters that are not the Responses API's (the chat `CreateChatCompletionRequest`
 * fields that `CreateResponse` lacks, shared/reference/), with what to send instead. Sent here they
 * would be dropped: a translated route refuses them, as OpenAI does (`unknown_parameter`); a
 * Responses upstream answers for itself.
 */
const CHAT_ONLY: Record<string, string> = {
  messages: 'Send the conversation as "input"',
  max_tokens: 'Send "max_output_tokens" instead',
  max_completion_tokens: 'Send "max_output_tokens" instead',
  response_format: 'Send "text": {"format": ...} instead',
  reasoning_effort: 'Send "reasoning": {"effort": ...} instead',
  verbosity: 'Send "text": {"verbosity": ...} instead',
  logprobs: 'Send "top_logprobs" and include "message.output_text.logprobs" instead',
  functions: 'Send function tools in "tools" instead',
  function_call: 'Send "tool_choice" instead',
  n: 'Leave it out: a response has one answer',
  seed: 'Leave it out, or send the request to /v1/chat/completions',
  stop: 'Leave it out, or send the request to /v1/chat/completions',
  presence_penalty: 'Leave it out, or send the request to /v1/chat/completions',
  frequency_penalty: 'Leave it out, or send the request to /v1/chat/completions',
  logit_bias: 'Leave it out, or send the request to /v1/chat/completions',
  prediction: 'Leave it out, or send the request to /v1/chat/completions',
  modalities: 'Leave it out, or send the request to /v1/chat/completions',
  audio: 'Leave it out, or send the request to /v1/chat/completions',
  web_search_options: 'Send a {"type": "web_search"} tool instead',
}

function toolChoice(
  choice: ResponsesRequestInput['tool_choice'],
  problems: GatewayError[],
): ChatRequestInput['tool_choice'] {
  if (choice === undefined || typeof choice === 'string') return choice
  if (choice.type === 'function' && choice.name) return { type: 'function', function: { name: choice.name } }
  problems.push(
    new GatewayError(
      400,
      'unsupported_value',
      `tool_choice {"type": "${clip(choice.type)}"} is not supported by this model's upstream. Send "auto", "required", "none" or {"type": "function", "name": "..."}.`,
      { param: 'tool_choice' },
    ),
  )
  return undefined
}

/** The Responses field behind a chat field name: a message's through its origin, a top-level one by `TOP_LEVEL`. */
function responsesParam(param: string, origins: Origin[]): string {
  const m = /^messages\[(\d+)\](.*)$/.exec(param)
  if (!m) return TOP_LEVEL[param] ?? param
  const origin = origins[Number(m[1])]
  if (!origin) return param
  const rest = m[2]!
  if (rest === '.role') return origin.role
  if (rest.startsWith('.tool_calls')) return origin.toolCalls
  if (origin.path === 'instructions' || origin.path === 'input') return origin.path
  return `${origin.path}${rest}`
}
