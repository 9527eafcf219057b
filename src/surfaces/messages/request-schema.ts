/**
 * @module
 * TypeBox schema of an Anthropic Messages request (`POST /v1/messages`) and of a `count_tokens`
 * body. Required: `model`, `max_tokens` (not for count_tokens), `messages`. Content blocks are
 * checked by `type` (text, image, document, tool_use, tool_result, thinking, redacted_thinking);
 * blocks of other types (server tools' traces, `search_result`, …) pass unread (`OtherBlock`);
 * blocks and tools may carry fields the gateway does not model (`cache_control`, `citations`,
 * `defer_loading`, …), and unknown top-level fields (`context_management`, `output_config`, …) are
 * accepted: they reach anthropic providers unchanged and are dropped when translating.
 */
import { type Static, Type as T, type TUnion } from '@sinclair/typebox'
import { GatewayError } from '../../util/errors.ts'
import { Tagged } from '../shared/schema.ts'
import { checkNamedTool } from '../shared/tool-choice.ts'

const Open = { additionalProperties: true } as const

const TextBlock = T.Object({ type: T.Literal('text'), text: T.String() }, Open)

const ImageSource = Tagged(
  [
    T.Object({ type: T.Literal('base64'), media_type: T.String(), data: T.String() }, Open),
    T.Object({ type: T.Literal('url'), url: T.String() }, Open),
    T.Object({ type: T.Literal('file'), file_id: T.String() }, Open),
  ],
  'type',
  'an image source of type "base64", "url" or "file"',
)

const ImageBlock = T.Object({ type: T.Literal('image'), source: ImageSource }, Open)

const DocumentBlock = T.Object(
  { type: T.Literal('document'), source: T.Object({ type: T.String() }, Open) },
  Open,
)

const ToolUseBlock = T.Object(
  {
    type: T.Literal('tool_use'),
    id: T.String({ minLength: 1 }),
    name: T.String({ minLength: 1 }),
    input: T.Record(T.String(), T.Unknown()),
  },
  Open,
)

/**
 * A block of a type the gateway does not model: Anthropic's server tools' blocks
 * (`server_tool_use`, `web_search_tool_result`, `mcp_tool_use`, …), `search_result`,
 * `container_upload`, and whatever Anthropic adds next. They reach anthropic providers as sent;
 * translation leaves them out of assistant turns and refuses them elsewhere.
 */
const OtherBlock = (known: readonly string[]) =>
  T.Object({ type: T.String({ pattern: `^(?!(${known.join('|')})$)` }) }, Open)

/** `union` with a branch for every other `type`, typed as `union` (code reading blocks matches no case for them). */
function withOthers<U extends TUnion>(union: U, known: readonly string[]): U {
  return { ...union, anyOf: [...union.anyOf, OtherBlock(known)] }
}

const ToolResultContent = T.Union([
  T.String(),
  T.Array(
    withOthers(Tagged([TextBlock, ImageBlock, DocumentBlock], 'type', 'a text, image or document block'), [
      'text',
      'image',
      'document',
    ]),
  ),
])

const ToolResultBlock = T.Object(
  {
    type: T.Literal('tool_result'),
    tool_use_id: T.String({ minLength: 1 }),
    content: T.Optional(ToolResultContent),
    is_error: T.Optional(T.Boolean()),
  },
  Open,
)

const ThinkingBlock = T.Object(
  { type: T.Literal('thinking'), thinking: T.String(), signature: T.Optional(T.String()) },
  Open,
)

const RedactedThinkingBlock = T.Object({ type: T.Literal('redacted_thinking'), data: T.String() }, Open)

/** The block types the gateway reads; any other type is Anthropic's alone (`OtherBlock`). */
const BLOCK_TYPES = [
  'text',
  'image',
  'document',
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
] as const

const KnownBlock = Tagged(
  [TextBlock, ImageBlock, DocumentBlock, ToolUseBlock, ToolResultBlock, ThinkingBlock, RedactedThinkingBlock],
  'type',
  'a content block of type "text", "image", "document", "tool_use", "tool_result", "thinking" or "redacted_thinking"',
)

/** Validation lets other types pass; the static type stays the blocks the gateway reads. */
export const ContentBlockSchema = withOthers(KnownBlock, BLOCK_TYPES)

const MessageSchema = T.Object(
  {
    // Claude Code also sends mid-conversation `system` turns.
    role: T.Union([T.Literal('user'), T.Literal('assistant'), T.Literal('system')]),
    content: T.Union([T.String(), T.Array(ContentBlockSchema)]),
  },
  { additionalProperties: false },
)

const SystemSchema = T.Union([T.String(), T.Array(TextBlock)])

/**
 * A client tool (`input_schema`), or a server tool such as `web_search_20250305` (a `type`). A
 * server tool may have no `name` (Anthropic's MCP connector: `{"type": "mcp_toolset",
 * "mcp_server_name": …}`); a client tool's is required (`checkTools`).
 */
const ToolSchema = T.Object(
  {
    name: T.Optional(T.String({ minLength: 1 })),
    type: T.Optional(T.String()),
    description: T.Optional(T.String()),
    input_schema: T.Optional(T.Record(T.String(), T.Unknown())),
  },
  Open,
)

const ToolChoiceSchema = Tagged(
  [
    T.Object({ type: T.Literal('auto'), disable_parallel_tool_use: T.Optional(T.Boolean()) }, Open),
    T.Object({ type: T.Literal('any'), disable_parallel_tool_use: T.Optional(T.Boolean()) }, Open),
    T.Object({ type: T.Literal('none') }, Open),
    T.Object(
      { type: T.Literal('tool'), name: T.String(), disable_parallel_tool_use: T.Optional(T.Boolean()) },
      Open,
    ),
  ],
  'type',
  'a tool_choice of type "auto", "any", "none" or "tool"',
)

const ThinkingSchema = Tagged(
  [
    T.Object({ type: T.Literal('enabled'), budget_tokens: T.Integer({ minimum: 1 }) }, Open),
    T.Object({ type: T.Literal('disabled') }, Open),
    T.Object({ type: T.Literal('adaptive') }, Open),
  ],
  'type',
  'thinking of type "enabled" (with budget_tokens), "adaptive" or "disabled"',
)

const common = {
  model: T.String({ minLength: 1 }),
  messages: T.Array(MessageSchema, { minItems: 1 }),
  system: T.Optional(SystemSchema),
  tools: T.Optional(T.Array(ToolSchema)),
  tool_choice: T.Optional(ToolChoiceSchema),
  thinking: T.Optional(ThinkingSchema),
}

/**
 * The rest of a Messages request's fields, typed alike on `/v1/messages` and count_tokens: a
 * count_tokens body that carries them (a client counting the request it will send) is refused
 * for what `/v1/messages` refuses.
 */
const sampling = {
  stop_sequences: T.Optional(T.Array(T.String())),
  temperature: T.Optional(T.Number({ minimum: 0, maximum: 1 })),
  top_p: T.Optional(T.Number({ minimum: 0, maximum: 1 })),
  top_k: T.Optional(T.Integer({ minimum: 0 })),
  metadata: T.Optional(T.Object({ user_id: T.Optional(T.Union([T.String(), T.Null()])) }, Open)),
  stream: T.Optional(T.Boolean()),
}

const MaxTokens = T.Integer({ minimum: 1 })

export const MessagesRequestSchema = T.Object({ ...common, max_tokens: MaxTokens, ...sampling }, Open)

/** `max_tokens` optional: Anthropic's count_tokens does not need it. */
export const CountTokensRequestSchema = T.Object(
  { ...common, max_tokens: T.Optional(MaxTokens), ...sampling },
  Open,
)

export type MessagesRequest = Static<typeof MessagesRequestSchema>
export type CountTokensRequest = Static<typeof CountTokensRequestSchema>
export type MessageInput = MessagesRequest['messages'][number]
export type ContentBlock = Exclude<MessageInput['content'], string>[number]

/**
 * What the schema cannot say: a client tool (no `type`, or `custom`) needs its `name`; and, as
 * Anthropic holds it ("tool_choice may only be specified while providing tools"), a `tool_choice`
 * of `auto`, `any` or `tool` needs tools (`none` is Anthropic's default without them, so it may
 * come alone); a `tool` choice names one of the tools.
 */
export function checkTools(req: CountTokensRequest): void {
  req.tools?.forEach((tool, i) => {
    if ((tool.type === undefined || tool.type === 'custom') && tool.name === undefined) {
      throw new GatewayError(
        400,
        'missing_required_parameter',
        `tools[${i}].name is required. Send a string.`,
        {
          param: `tools[${i}].name`,
        },
      )
    }
  })
  const choice = req.tool_choice
  if (choice !== undefined && choice.type !== 'none' && !req.tools?.length) {
    throw new GatewayError(
      400,
      'invalid_value',
      `tool_choice {"type": "${choice.type}"} may only be sent with tools. Send the tools it chooses among, or leave tool_choice out.`,
      { param: 'tool_choice' },
    )
  }
  // A server tool has a name too (`web_search`), and may be the one chosen.
  if (choice?.type === 'tool') {
    checkNamedTool(
      choice.name,
      (req.tools ?? []).flatMap((t) => (t.name === undefined ? [] : [t.name])),
    )
  }
}
