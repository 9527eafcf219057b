/**
 * @module
 * Open Responses' shapes (openresponses/openresponses, `public/openapi/openapi.json`, version
 * 2026-04-24, read and written again here by hand in TypeBox, not copied): the `ResponseResource`
 * with every field its schema requires, the output items (`ItemField`), the 24 streaming events
 * its compliance suite validates, and `CompactResource` (`POST /responses/compact`). Unknown keys
 * are allowed, as the suite's zod objects allow them. `responseErrors` / `eventErrors` /
 * `compactErrors` give each problem as `path: what`, an empty list when the object fits.
 *
 * @example
 * expect(responseErrors(await res.json())).toEqual([])
 */
import { Type as T, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

const Nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()])
const Int = T.Integer()
const Lit = (...values: string[]) => T.Union(values.map((v) => T.Literal(v)))

const Usage = T.Object({
  input_tokens: Int,
  output_tokens: Int,
  total_tokens: Int,
  input_tokens_details: T.Object({ cached_tokens: Int }),
  output_tokens_details: T.Object({ reasoning_tokens: Int }),
})

const LogProb = T.Object({
  token: T.String(),
  logprob: T.Number(),
  bytes: T.Array(Int),
  top_logprobs: T.Array(T.Object({ token: T.String(), logprob: T.Number(), bytes: T.Array(Int) })),
})

/** The content parts (`Message.content`, a summary, an event's `part`), by `type`. */
const PARTS: Record<string, TSchema> = {
  input_text: T.Object({ type: T.Literal('input_text'), text: T.String() }),
  output_text: T.Object({
    type: T.Literal('output_text'),
    text: T.String(),
    annotations: T.Array(T.Unknown()),
    logprobs: T.Optional(T.Array(LogProb)),
  }),
  text: T.Object({ type: T.Literal('text'), text: T.String() }),
  summary_text: T.Object({ type: T.Literal('summary_text'), text: T.String() }),
  reasoning_text: T.Object({ type: T.Literal('reasoning_text'), text: T.String() }),
  refusal: T.Object({ type: T.Literal('refusal'), refusal: T.String() }),
  input_image: T.Object({
    type: T.Literal('input_image'),
    image_url: Nullable(T.String()),
    detail: Lit('low', 'high', 'auto'),
  }),
  input_file: T.Object({ type: T.Literal('input_file') }),
  input_video: T.Object({ type: T.Literal('input_video'), video_url: T.String() }),
}
const Part = T.Object({ type: T.String() }) // narrowed by `PARTS` in `check`

const ItemStatus = Lit('in_progress', 'completed', 'incomplete')
/** `ItemField`, by `type`. */
const ITEMS: Record<string, TSchema> = {
  message: T.Object({
    type: T.Literal('message'),
    id: T.String(),
    status: ItemStatus,
    role: Lit('user', 'assistant', 'system', 'developer'),
    content: T.Array(Part),
  }),
  function_call: T.Object({
    type: T.Literal('function_call'),
    id: T.String(),
    call_id: T.String(),
    name: T.String(),
    arguments: T.String(),
    status: ItemStatus,
  }),
  function_call_output: T.Object({
    type: T.Literal('function_call_output'),
    id: T.String(),
    call_id: T.String(),
    output: T.Union([T.String(), T.Array(Part)]),
    status: ItemStatus,
  }),
  reasoning: T.Object({
    type: T.Literal('reasoning'),
    id: T.String(),
    summary: T.Array(Part),
    content: T.Optional(T.Array(Part)),
    encrypted_content: T.Optional(T.String()),
  }),
  compaction: T.Object({ type: T.Literal('compaction'), id: T.String(), encrypted_content: T.String() }),
}
const Item = T.Object({ type: T.String() }) // narrowed by `ITEMS` in `check`

const FunctionToolChoice = T.Object({ type: T.Literal('function'), name: T.Optional(T.String()) })

export const ResponseResource = T.Object({
  id: T.String(),
  object: T.Literal('response'),
  created_at: Int,
  completed_at: Nullable(Int),
  status: T.String(),
  incomplete_details: Nullable(T.Object({ reason: T.String() })),
  model: T.String(),
  previous_response_id: Nullable(T.String()),
  instructions: Nullable(T.String()),
  output: T.Array(Item),
  error: Nullable(T.Object({ code: T.String(), message: T.String() })),
  tools: T.Array(
    T.Object({
      type: T.Literal('function'),
      name: T.String(),
      description: Nullable(T.String()),
      parameters: Nullable(T.Record(T.String(), T.Unknown())),
      strict: Nullable(T.Boolean()),
    }),
  ),
  tool_choice: T.Union([
    FunctionToolChoice,
    Lit('none', 'auto', 'required'),
    T.Object({
      type: T.Literal('allowed_tools'),
      tools: T.Array(FunctionToolChoice),
      mode: Lit('none', 'auto', 'required'),
    }),
  ]),
  truncation: Lit('auto', 'disabled'),
  parallel_tool_calls: T.Boolean(),
  text: T.Object({
    format: T.Union([
      T.Object({ type: T.Literal('text') }),
      T.Object({ type: T.Literal('json_object') }),
      T.Object({ type: T.Literal('json_schema'), name: T.String() }),
    ]),
    verbosity: T.Optional(Lit('low', 'medium', 'high')),
  }),
  top_p: T.Number(),
  presence_penalty: T.Number(),
  frequency_penalty: T.Number(),
  top_logprobs: Int,
  temperature: T.Number(),
  reasoning: Nullable(
    T.Object({
      effort: Nullable(Lit('none', 'minimal', 'low', 'medium', 'high', 'xhigh')),
      summary: Nullable(Lit('concise', 'detailed', 'auto')),
    }),
  ),
  // Required by the schema's newest `ResponseResource.json`; the 2026-04-24 document leaves it out.
  user: Nullable(T.String()),
  usage: Nullable(Usage),
  max_output_tokens: Nullable(Int),
  max_tool_calls: Nullable(Int),
  store: T.Boolean(),
  background: T.Boolean(),
  service_tier: T.String(),
  metadata: T.Unknown(),
  safety_identifier: Nullable(T.String()),
  prompt_cache_key: Nullable(T.String()),
})

export const CompactResource = T.Object({
  id: T.String(),
  object: T.Literal('response.compaction'),
  output: T.Array(Item),
  created_at: Int,
  usage: Usage,
})

const seq = { sequence_number: Int }
const at = { ...seq, item_id: T.String(), output_index: Int }
const withResponse = (type: string) => T.Object({ type: T.Literal(type), ...seq, response: ResponseResource })
/** The streaming events the suite's parser accepts, by `type`. */
const EVENTS: Record<string, TSchema> = {
  'response.created': withResponse('response.created'),
  'response.queued': withResponse('response.queued'),
  'response.in_progress': withResponse('response.in_progress'),
  'response.completed': withResponse('response.completed'),
  'response.failed': withResponse('response.failed'),
  'response.incomplete': withResponse('response.incomplete'),
  'response.output_item.added': T.Object({ ...seq, output_index: Int, item: Nullable(Item) }),
  'response.output_item.done': T.Object({ ...seq, output_index: Int, item: Nullable(Item) }),
  'response.reasoning_summary_part.added': T.Object({ ...at, summary_index: Int, part: Part }),
  'response.reasoning_summary_part.done': T.Object({ ...at, summary_index: Int, part: Part }),
  'response.content_part.added': T.Object({ ...at, content_index: Int, part: Part }),
  'response.content_part.done': T.Object({ ...at, content_index: Int, part: Part }),
  'response.output_text.delta': T.Object({
    ...at,
    content_index: Int,
    delta: T.String(),
    logprobs: T.Optional(T.Array(LogProb)),
    obfuscation: T.Optional(T.String()),
  }),
  'response.output_text.done': T.Object({
    ...at,
    content_index: Int,
    text: T.String(),
    logprobs: T.Optional(T.Array(LogProb)),
  }),
  'response.refusal.delta': T.Object({ ...at, content_index: Int, delta: T.String() }),
  'response.refusal.done': T.Object({ ...at, content_index: Int, refusal: T.String() }),
  'response.reasoning.delta': T.Object({ ...at, content_index: Int, delta: T.String() }),
  'response.reasoning.done': T.Object({ ...at, content_index: Int, text: T.String() }),
  'response.reasoning_summary_text.delta': T.Object({ ...at, summary_index: Int, delta: T.String() }),
  'response.reasoning_summary_text.done': T.Object({ ...at, summary_index: Int, text: T.String() }),
  'response.output_text.annotation.added': T.Object({
    ...at,
    content_index: Int,
    annotation_index: Int,
    annotation: Nullable(T.Unknown()),
  }),
  'response.function_call_arguments.delta': T.Object({ ...at, delta: T.String() }),
  'response.function_call_arguments.done': T.Object({ ...at, arguments: T.String() }),
  error: T.Object({
    ...seq,
    error: T.Object({
      type: T.String(),
      code: Nullable(T.String()),
      message: T.String(),
      param: Nullable(T.String()),
    }),
  }),
}

/** Every stream event type Open Responses defines (its compliance parser knows no others). */
export const EVENT_TYPES = Object.keys(EVENTS)

function check(schema: TSchema, value: unknown, path: string, out: string[]): void {
  for (const e of Value.Errors(schema, value)) out.push(`${path}${e.path}: ${e.message}`)
  if (out.length) return
  // The unions by `type`, checked against the member the value names (readable errors).
  const v = value as Record<string, any>
  if (schema === ResponseResource || schema === CompactResource)
    for (const [i, item] of (v.output as unknown[]).entries()) checkItem(item, `${path}/output/${i}`, out)
  if (v.item) checkItem(v.item, `${path}/item`, out)
  if (v.part) checkPart(v.part, `${path}/part`, out)
  if (v.response) check(ResponseResource, v.response, `${path}/response`, out)
}

function checkItem(item: unknown, path: string, out: string[]): void {
  const type = (item as { type?: unknown })?.type
  const schema = typeof type === 'string' ? ITEMS[type] : undefined
  if (!schema) return void out.push(`${path}/type: ${JSON.stringify(type)} is no ItemField type`)
  for (const e of Value.Errors(schema, item)) out.push(`${path}${e.path}: ${e.message}`)
  const parts = [
    ...((item as { content?: unknown[] }).content ?? []),
    ...((item as { summary?: unknown[] }).summary ?? []),
  ]
  for (const [i, p] of parts.entries()) checkPart(p, `${path}/part/${i}`, out)
}

function checkPart(part: unknown, path: string, out: string[]): void {
  const type = (part as { type?: unknown })?.type
  const schema = typeof type === 'string' ? PARTS[type] : undefined
  if (!schema) return void out.push(`${path}/type: ${JSON.stringify(type)} is no content part type`)
  for (const e of Value.Errors(schema, part)) out.push(`${path}${e.path}: ${e.message}`)
}

/** A response object against `ResponseResource`. */
export function responseErrors(value: unknown): string[] {
  const out: string[] = []
  check(ResponseResource, value, '', out)
  return out
}

/** A `POST /responses/compact` answer against `CompactResource`. */
export function compactErrors(value: unknown): string[] {
  const out: string[] = []
  check(CompactResource, value, '', out)
  return out
}

/** A stream event against the event schema its `type` names. */
export function eventErrors(event: unknown): string[] {
  const type = (event as { type?: unknown })?.type
  const schema = typeof type === 'string' ? EVENTS[type] : undefined
  if (!schema) return [`type: ${JSON.stringify(type)} is no Open Responses stream event`]
  const out: string[] = []
  check(schema, event, `${type}`, out)
  return out
}
