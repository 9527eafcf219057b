/**
 * @module
 * The mock upstream's response bodies, shaped and ordered as OpenAI's API sends them
 * (`chat.completion`, `chat.completion.chunk` SSE frames, error bodies, the model list).
 */

/** What a response depends on; identical shapes share their bytes. */
export interface Shape {
  model: string
  created: number
  /** Content deltas (words) of a text answer. */
  words: number
  /** `stream_options.include_usage` was set. */
  usage: boolean
  /** Function names of the two tool calls to make; empty for a text answer. */
  tools: string[]
}

const WORDS = ['Hello', ' from', ' the', ' mock', ' upstream', '.', ' It', ' streams', ' like', ' OpenAI']
const ID = 'chatcmpl-mock'
const FINGERPRINT = 'fp_mock'
const PROMPT_TOKENS = 12
const enc = new TextEncoder()

export function errorBody(
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
): string {
  return JSON.stringify({ error: { message, type, param, code } })
}

export const MODELS_BODY = JSON.stringify({
  object: 'list',
  data: ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'].map((id) => ({
    id,
    object: 'model',
    created: 1_700_000_000,
    owned_by: 'mock',
  })),
})

function content(shape: Shape): string[] {
  return Array.from({ length: shape.words }, (_, i) => WORDS[i % WORDS.length]!)
}

function toolArguments(i: number): string {
  return JSON.stringify({ location: i === 0 ? 'Paris' : 'Tokyo', unit: 'celsius' })
}

function usage(completionTokens: number) {
  return {
    prompt_tokens: PROMPT_TOKENS,
    completion_tokens: completionTokens,
    total_tokens: PROMPT_TOKENS + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
}

function completionTokens(shape: Shape): number {
  return shape.tools.length > 0 ? 20 * shape.tools.length : shape.words
}

export function buildCompletion(shape: Shape): string {
  const calls = shape.tools.map((name, i) => ({
    id: `call_mock_${i}`,
    type: 'function',
    function: { name, arguments: toolArguments(i) },
  }))
  const message =
    calls.length > 0
      ? { role: 'assistant', content: null, tool_calls: calls, refusal: null, annotations: [] }
      : { role: 'assistant', content: content(shape).join(''), refusal: null, annotations: [] }
  return JSON.stringify({
    id: ID,
    object: 'chat.completion',
    created: shape.created,
    model: shape.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' }],
    usage: usage(completionTokens(shape)),
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  })
}

/** Every SSE frame of a streamed answer, `data: [DONE]` included, each already encoded. */
export function buildStreamFrames(shape: Shape): Uint8Array[] {
  const frame = (delta: Record<string, unknown>, finish: string | null = null): Uint8Array => {
    const chunk: Record<string, unknown> = {
      id: ID,
      object: 'chat.completion.chunk',
      created: shape.created,
      model: shape.model,
      system_fingerprint: FINGERPRINT,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    }
    // With include_usage OpenAI puts `"usage": null` on every chunk but the last.
    if (shape.usage) chunk.usage = null
    return enc.encode(`data: ${JSON.stringify(chunk)}\n\n`)
  }
  const frames: Uint8Array[] = []
  if (shape.tools.length === 0) {
    frames.push(frame({ role: 'assistant', content: '', refusal: null }))
    for (const word of content(shape)) frames.push(frame({ content: word }))
    frames.push(frame({}, 'stop'))
  } else {
    shape.tools.forEach((name, i) => {
      const head = { index: i, id: `call_mock_${i}`, type: 'function', function: { name, arguments: '' } }
      frames.push(
        frame(
          i === 0
            ? { role: 'assistant', content: null, tool_calls: [head], refusal: null }
            : { tool_calls: [head] },
        ),
      )
      const args = toolArguments(i)
      const third = Math.ceil(args.length / 3)
      for (let at = 0; at < args.length; at += third) {
        frames.push(
          frame({ tool_calls: [{ index: i, function: { arguments: args.slice(at, at + third) } }] }),
        )
      }
    })
    frames.push(frame({}, 'tool_calls'))
  }
  if (shape.usage) {
    const last = {
      id: ID,
      object: 'chat.completion.chunk',
      created: shape.created,
      model: shape.model,
      system_fingerprint: FINGERPRINT,
      choices: [],
      usage: usage(completionTokens(shape)),
    }
    frames.push(enc.encode(`data: ${JSON.stringify(last)}\n\n`))
  }
  frames.push(enc.encode('data: [DONE]\n\n'))
  return frames
}
