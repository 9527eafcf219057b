/**
 * @module
 * The mock upstream's Responses API bodies (`POST /v1/responses`), framed as OpenAI sends them:
 * `event: <type>` and one `data:` line per event, `sequence_number` from 0, no `[DONE]`; usage only
 * in `response.completed`. A text answer of `words` deltas, like the chat stream.
 */
import type { Shape } from './wire.ts'

const WORDS = ['Hello', ' from', ' the', ' mock', ' upstream', '.', ' It', ' streams', ' like', ' OpenAI']
const enc = new TextEncoder()

function response(shape: Shape, status: string, output: unknown[], usage: unknown) {
  return {
    id: 'resp_mock',
    object: 'response',
    created_at: shape.created,
    status,
    completed_at: status === 'completed' ? shape.created : null,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: shape.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage,
    metadata: {},
  }
}

function parts(shape: Shape) {
  const words = Array.from({ length: shape.words }, (_, i) => WORDS[i % WORDS.length]!)
  const text = words.join('')
  const part = { type: 'output_text', annotations: [], logprobs: [], text }
  const item = { id: 'msg_mock', type: 'message', status: 'completed', role: 'assistant', content: [part] }
  const usage = {
    input_tokens: 12,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: shape.words,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 12 + shape.words,
  }
  return { words, text, part, item, usage }
}

export function buildResponseJson(shape: Shape): string {
  const { item, usage } = parts(shape)
  return JSON.stringify(response(shape, 'completed', [item], usage))
}

export function buildResponsesFrames(shape: Shape): Uint8Array[] {
  const { words, text, part, item, usage } = parts(shape)
  const at = { item_id: 'msg_mock', output_index: 0, content_index: 0 }
  const events: Array<Record<string, unknown>> = [
    { type: 'response.created', response: response(shape, 'in_progress', [], null) },
    { type: 'response.in_progress', response: response(shape, 'in_progress', [], null) },
    {
      type: 'response.output_item.added',
      output_index: 0,
      item: { ...item, status: 'in_progress', content: [] },
    },
    { type: 'response.content_part.added', ...at, part: { ...part, text: '' } },
    ...words.map((delta) => ({ type: 'response.output_text.delta', ...at, delta, logprobs: [] })),
    { type: 'response.output_text.done', ...at, text, logprobs: [] },
    { type: 'response.content_part.done', ...at, part },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: response(shape, 'completed', [item], usage) },
  ]
  return events.map((event, sequence_number) =>
    enc.encode(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number })}\n\n`),
  )
}
