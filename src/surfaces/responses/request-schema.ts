/**
 * @module
 * TypeBox schema of `POST /v1/responses` bodies, after OpenAI's `CreateResponse`
 * (shared/reference/openai-responses-schemas.json). Known fields must have OpenAI's types; other
 * top-level keys, and input items or tools of types the gateway does not model, pass validation so
 * they reach upstreams that speak Responses; translated routes refuse them by name (`decode.ts`).
 *
 * Unions carry the same `x-discriminator` / `x-expected` annotations as the chat schema, read only
 * by the error explainer (`json/validation-error.ts`).
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { REASONING_EFFORTS } from '../../providers/shared/reasoning-effort.ts'
import { Nullable, Tagged } from '../shared/schema.ts'

/** A `type` that is none of `known`: the branch for item and tool types the gateway passes on unread. */
const OtherType = (known: readonly string[]) =>
  T.Object({ type: T.String({ pattern: `^(?!(${known.join('|')})$)` }) })

const InputText = T.Object({ type: T.Literal('input_text'), text: T.String() })
const InputImage = T.Object({
  type: T.Literal('input_image'),
  image_url: T.Optional(Nullable(T.String())),
  file_id: T.Optional(Nullable(T.String())),
  // `original` is the Responses API's own (its ImageDetail enum); chat has auto, low and high.
  detail: T.Optional(
    T.Union([T.Literal('auto'), T.Literal('low'), T.Literal('high'), T.Literal('original')]),
  ),
})
const InputFile = T.Object({
  type: T.Literal('input_file'),
  file_id: T.Optional(Nullable(T.String())),
  file_data: T.Optional(T.String()),
  file_url: T.Optional(T.String()),
  filename: T.Optional(T.String()),
})
const OutputText = T.Object({ type: T.Literal('output_text'), text: T.String() })
const Refusal = T.Object({ type: T.Literal('refusal'), refusal: T.String() })

const PART = 'a content part such as {"type": "input_text", "text": "..."}'
const ContentPart = Tagged([InputText, InputImage, InputFile, OutputText, Refusal], 'type', PART)

/** `type` is optional in OpenAI's input messages; `validate.ts` fills it in before the check. */
export const MessageItemSchema = T.Object({
  type: T.Literal('message'),
  role: T.Union([T.Literal('user'), T.Literal('assistant'), T.Literal('system'), T.Literal('developer')], {
    'x-expected': '"user", "assistant", "system" or "developer"',
  }),
  content: T.Union([T.String(), T.Array(ContentPart)], {
    'x-expected': `a string or an array of content parts such as [{"type": "input_text", "text": "..."}]`,
  }),
})

const FunctionCallItem = T.Object({
  type: T.Literal('function_call'),
  call_id: T.String({ minLength: 1 }),
  name: T.String({ minLength: 1 }),
  arguments: T.String(),
  namespace: T.Optional(Nullable(T.String())),
})

const FunctionCallOutputItem = T.Object({
  type: T.Literal('function_call_output'),
  call_id: T.String({ minLength: 1 }),
  output: T.Union([T.String(), T.Array(ContentPart)], {
    'x-expected': 'a string, or an array of input_text / input_image / input_file parts',
  }),
})

const ReasoningItem = T.Object({
  type: T.Literal('reasoning'),
  summary: T.Optional(T.Array(T.Object({ type: T.String(), text: T.String() }))),
  encrypted_content: T.Optional(Nullable(T.String())),
})

export const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'reasoning'] as const

/** Input items, told apart by `type`. */
export const InputItemSchema = Tagged(
  [MessageItemSchema, FunctionCallItem, FunctionCallOutputItem, ReasoningItem, OtherType(ITEM_TYPES)],
  'type',
  'an input item such as {"role": "user", "content": "Hello"} or {"type": "function_call_output", "call_id": "...", "output": "..."}',
)

const TOOL_NAME = T.String({
  pattern: '^[a-zA-Z0-9_-]{1,64}$',
  'x-expected': '1 to 64 letters, digits, underscores or dashes',
})

export const FunctionToolSchema = T.Object({
  type: T.Literal('function'),
  name: TOOL_NAME,
  description: T.Optional(Nullable(T.String())),
  parameters: T.Optional(Nullable(T.Object({}))),
  strict: T.Optional(Nullable(T.Boolean())),
})

const NamespaceTool = T.Object({
  type: T.Literal('namespace'),
  name: T.String({ minLength: 1 }),
  description: T.Optional(T.String()),
  tools: T.Array(Tagged([FunctionToolSchema, OtherType(['function'])], 'type', 'a function tool'), {
    minItems: 1,
  }),
})

export const ToolSchema = Tagged(
  [FunctionToolSchema, NamespaceTool, OtherType(['function', 'namespace'])],
  'type',
  'a tool such as {"type": "function", "name": "...", "parameters": {...}}',
)

const ToolChoiceSchema = T.Union(
  [
    T.Literal('none'),
    T.Literal('auto'),
    T.Literal('required'),
    T.Object({ type: T.String(), name: T.Optional(T.String()) }),
  ],
  { 'x-expected': '"none", "auto", "required" or {"type": "function", "name": "..."}' },
)

const FormatSchema = Tagged(
  [
    T.Object({ type: T.Literal('text') }),
    T.Object({ type: T.Literal('json_object') }),
    T.Object({
      type: T.Literal('json_schema'),
      name: T.String({ minLength: 1 }),
      schema: T.Object({}),
      description: T.Optional(T.String()),
      strict: T.Optional(Nullable(T.Boolean())),
    }),
  ],
  'type',
  '{"type": "text"}, {"type": "json_object"} or {"type": "json_schema", "name": "...", "schema": {...}}',
)

/** The request. `model` and `input` first: the explainer reports the first problem in this order. */
export const ResponsesRequestSchema = T.Object({
  model: T.String(),
  input: T.Union([T.String(), T.Array(InputItemSchema)], {
    'x-expected': 'a string, or an array of input items such as [{"role": "user", "content": "Hello"}]',
  }),
  instructions: T.Optional(Nullable(T.String())),
  stream: T.Optional(Nullable(T.Boolean())),
  store: T.Optional(Nullable(T.Boolean())),
  previous_response_id: T.Optional(Nullable(T.String())),
  conversation: T.Optional(Nullable(T.Unknown())),
  background: T.Optional(Nullable(T.Boolean())),
  tools: T.Optional(T.Array(ToolSchema)),
  tool_choice: T.Optional(ToolChoiceSchema),
  parallel_tool_calls: T.Optional(Nullable(T.Boolean())),
  text: T.Optional(
    T.Object({
      format: T.Optional(FormatSchema),
      verbosity: T.Optional(Nullable(T.Union([T.Literal('low'), T.Literal('medium'), T.Literal('high')]))),
    }),
  ),
  moderation: T.Optional(Nullable(T.Object({ model: T.String() }))),
  reasoning: T.Optional(
    Nullable(
      T.Object({
        effort: T.Optional(Nullable(T.Union(REASONING_EFFORTS.map((e) => T.Literal(e))))),
        summary: T.Optional(Nullable(T.String())),
      }),
    ),
  ),
  max_output_tokens: T.Optional(Nullable(T.Integer({ minimum: 1 }))),
  temperature: T.Optional(Nullable(T.Number({ minimum: 0, maximum: 2 }))),
  top_p: T.Optional(Nullable(T.Number({ minimum: 0, maximum: 1 }))),
  metadata: T.Optional(Nullable(T.Record(T.String(), T.String()))),
  include: T.Optional(Nullable(T.Array(T.String()))),
  top_logprobs: T.Optional(Nullable(T.Integer({ minimum: 0, maximum: 20 }))),
  user: T.Optional(T.String()),
  safety_identifier: T.Optional(Nullable(T.String())),
})

export type ResponsesRequestInput = Static<typeof ResponsesRequestSchema> & { [extra: string]: unknown }
export type MessageItem = Static<typeof MessageItemSchema>
export type FunctionCallItemInput = Static<typeof FunctionCallItem>
export type FunctionCallOutputItemInput = Static<typeof FunctionCallOutputItem>
/** An input item; narrow by `type` with the item types above. */
export type InputItem = { type: string } & Record<string, unknown>
export type NamespaceToolInput = Static<typeof NamespaceTool>
/** A tool; narrow by `type` with `FunctionToolInput` / `NamespaceToolInput`. */
export type ResponsesTool = { type: string } & Record<string, unknown>
export type FunctionToolInput = Static<typeof FunctionToolSchema>
export type ContentPartInput = Static<typeof ContentPart>
