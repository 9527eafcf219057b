/**
 * @module
 * TypeBox schema of the chat request as the surfaces decode it (`ChatRequestInput`): the chat
 * surface validates `POST /v1/chat/completions` bodies with it, and the Responses surface decodes
 * into it. After OpenAI's `CreateChatCompletionRequest` (shared/reference/openai-chat-schemas.json).
 * Known fields must have OpenAI's types; any other top-level key, message key or content-part key
 * passes through untouched, so newer OpenAI parameters reach OpenAI-compatible providers.
 *
 * Where OpenAI accepts `null` for an optional parameter, so does this schema; `null` then means
 * "not set" (see `applyDefaults`). Unions carry the explainer's annotations (`schema.ts`).
 */
import { type Static, Type as T, type TSchema } from '@sinclair/typebox'
import { Nullable, Tagged } from './schema.ts'

/** `content` arrays hold at least one part (OpenAI rejects `[]`). */
const Parts = <S extends TSchema>(part: S) => T.Array(part, { minItems: 1 })

const TextPartSchema = T.Object({ type: T.Literal('text'), text: T.String() })

const ImagePartSchema = T.Object({
  type: T.Literal('image_url'),
  image_url: T.Object({
    url: T.String(),
    detail: T.Optional(T.Union([T.Literal('auto'), T.Literal('low'), T.Literal('high')])),
  }),
})

/** `format` is any string: OpenAI takes wav and mp3, other providers more. */
const AudioPartSchema = T.Object({
  type: T.Literal('input_audio'),
  input_audio: T.Object({ data: T.String(), format: T.String() }),
})

const FilePartSchema = T.Object({
  type: T.Literal('file'),
  file: T.Object({
    filename: T.Optional(T.String()),
    file_data: T.Optional(T.String()),
    file_id: T.Optional(T.String()),
  }),
})

const RefusalPartSchema = T.Object({ type: T.Literal('refusal'), refusal: T.String() })

const PART = 'a content part object such as {"type": "text", "text": "..."}'
const UserPartSchema = Tagged(
  [TextPartSchema, ImagePartSchema, AudioPartSchema, FilePartSchema],
  'type',
  PART,
)
const AssistantPartSchema = Tagged([TextPartSchema, RefusalPartSchema], 'type', PART)

/** System, developer and tool messages take a string or text parts. */
const TextContent = T.Union([T.String(), Parts(Tagged([TextPartSchema], 'type', PART))])

const ToolCallSchema = Tagged(
  [
    T.Object({
      type: T.Literal('function'),
      id: T.String(),
      function: T.Object({ name: T.String(), arguments: T.String() }),
    }),
  ],
  'type',
  'a tool call object such as {"id": "...", "type": "function", "function": {"name": "...", "arguments": "{}"}}',
)

// `role` comes first in every message so the compiled union rejects a wrong branch on its first test.
const SystemMessageSchema = T.Object({
  role: T.Literal('system'),
  content: TextContent,
  name: T.Optional(T.String()),
})
const DeveloperMessageSchema = T.Object({
  role: T.Literal('developer'),
  content: TextContent,
  name: T.Optional(T.String()),
})
const UserMessageSchema = T.Object({
  role: T.Literal('user'),
  content: T.Union([T.String(), Parts(UserPartSchema)]),
  name: T.Optional(T.String()),
})
const AssistantMessageSchema = T.Object({
  role: T.Literal('assistant'),
  content: T.Optional(T.Union([T.String(), Parts(AssistantPartSchema), T.Null()])),
  refusal: T.Optional(Nullable(T.String())),
  name: T.Optional(T.String()),
  tool_calls: T.Optional(T.Array(ToolCallSchema)),
})
const ToolMessageSchema = T.Object({
  role: T.Literal('tool'),
  content: TextContent,
  tool_call_id: T.String(),
})

/** Ordered by how often each role occurs, because the compiled check tries the branches in order. */
const MessageSchema = Tagged(
  [UserMessageSchema, AssistantMessageSchema, SystemMessageSchema, ToolMessageSchema, DeveloperMessageSchema],
  'role',
  'a message object such as {"role": "user", "content": "Hello"}',
)

const TOOL_NAME_PATTERN = '^[a-zA-Z0-9_-]{1,64}$'

/** Function tools only: OpenAI's `custom` tools have no equivalent at the other providers. */
const ToolSchema = Tagged(
  [
    T.Object({
      type: T.Literal('function'),
      function: T.Object({
        name: T.String({
          pattern: TOOL_NAME_PATTERN,
          'x-expected': '1 to 64 letters, digits, underscores or dashes',
        }),
        description: T.Optional(T.String()),
        parameters: T.Optional(T.Object({})),
        strict: T.Optional(Nullable(T.Boolean())),
      }),
    }),
  ],
  'type',
  'a tool object such as {"type": "function", "function": {"name": "...", "parameters": {...}}}',
)

const NAMED_TOOL = '{"type": "function", "function": {"name": "..."}}'
const ToolChoiceSchema = T.Union(
  [
    T.Literal('none'),
    T.Literal('auto'),
    T.Literal('required'),
    Tagged(
      [T.Object({ type: T.Literal('function'), function: T.Object({ name: T.String() }) })],
      'type',
      NAMED_TOOL,
    ),
  ],
  { 'x-expected': `"none", "auto", "required" or ${NAMED_TOOL}` },
)

const ResponseFormatSchema = Tagged(
  [
    T.Object({ type: T.Literal('text') }),
    T.Object({ type: T.Literal('json_object') }),
    T.Object({
      type: T.Literal('json_schema'),
      json_schema: T.Object({
        name: T.String(),
        description: T.Optional(T.String()),
        schema: T.Optional(T.Object({})),
        strict: T.Optional(Nullable(T.Boolean())),
      }),
    }),
  ],
  'type',
  '{"type": "text"}, {"type": "json_object"} or {"type": "json_schema", "json_schema": {...}}',
)

/**
 * The chat request. `model` and `messages` come first: a body missing both is told about `model`
 * first, and the error explainer reports the first problem in this order.
 */
export const ChatRequestSchema = T.Object({
  model: T.String(),
  messages: T.Array(MessageSchema, { minItems: 1 }),
  stream: T.Optional(Nullable(T.Boolean())),
  stream_options: T.Optional(Nullable(T.Object({ include_usage: T.Optional(T.Boolean()) }))),
  temperature: T.Optional(Nullable(T.Number({ minimum: 0, maximum: 2 }))),
  top_p: T.Optional(Nullable(T.Number({ minimum: 0, maximum: 1 }))),
  max_tokens: T.Optional(Nullable(T.Integer({ minimum: 1 }))),
  max_completion_tokens: T.Optional(Nullable(T.Integer({ minimum: 1 }))),
  n: T.Optional(Nullable(T.Integer({ minimum: 1, maximum: 128 }))),
  stop: T.Optional(T.Union([T.String(), T.Array(T.String(), { maxItems: 4 }), T.Null()])),
  tools: T.Optional(T.Array(ToolSchema, { minItems: 1 })),
  tool_choice: T.Optional(ToolChoiceSchema),
  parallel_tool_calls: T.Optional(T.Boolean()),
  response_format: T.Optional(ResponseFormatSchema),
  logprobs: T.Optional(Nullable(T.Boolean())),
  top_logprobs: T.Optional(Nullable(T.Integer({ minimum: 0, maximum: 20 }))),
  presence_penalty: T.Optional(Nullable(T.Number({ minimum: -2, maximum: 2 }))),
  frequency_penalty: T.Optional(Nullable(T.Number({ minimum: -2, maximum: 2 }))),
  seed: T.Optional(Nullable(T.Integer())),
  user: T.Optional(T.String()),
  logit_bias: T.Optional(Nullable(T.Record(T.String(), T.Number({ minimum: -100, maximum: 100 })))),
})

/** Top-level keys the schema knows; every other key passes through as it came. */
export const KNOWN_KEYS: readonly string[] = Object.keys(ChatRequestSchema.properties)

/** A request body that passed `validateChatRequest`. `model` is still the client's prefixed id. */
export type ChatRequestInput = Static<typeof ChatRequestSchema> & { [extra: string]: unknown }
export type ChatMessageInput = Static<typeof MessageSchema>
export type MessageRole = ChatMessageInput['role']
