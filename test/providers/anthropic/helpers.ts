/** Shared pieces of the Anthropic adapter tests: provider config, call context, stream reading. */
import type { ProviderConfig } from '../../../src/config/schema.ts'
import type { ChatCompletionChunk } from '../../../src/operations/chat.ts'
import type { CallContext } from '../../../src/providers/types.ts'

export { planItems } from '../helpers.ts'

export const API_KEY = 'sk-ant-api03-test-key-0123456789abcdef'

export function anthropicProvider(baseUrl: string, extra: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    prefix: 'anthropic',
    kind: 'anthropic',
    base_url: baseUrl,
    api_key: API_KEY,
    models: [
      {
        name: 'claude-test',
        context_window: 200_000,
        max_output_tokens: 8192,
        features: ['streaming', 'tools'],
      },
    ],
    ...extra,
  }
}

export function callContext(provider: ProviderConfig, signal = new AbortController().signal): CallContext {
  return {
    provider,
    model: provider.models[0]!,
    signal,
    requestId: 'req_test',
    timeouts: { firstByteMs: 5_000, idleMs: 5_000, totalMs: 10_000 },
  }
}

/** Every chunk until the stream ends, and the error it ended with, if any. */
export async function drain(
  stream: ReadableStream<ChatCompletionChunk>,
): Promise<{ chunks: ChatCompletionChunk[]; error?: unknown }> {
  const chunks: ChatCompletionChunk[] = []
  try {
    for await (const chunk of stream) chunks.push(chunk)
    return { chunks }
  } catch (error) {
    return { chunks, error }
  }
}

/**
 * What an OpenAI client rebuilds from the chunks: content, reasoning (`reasoning_content`), tool
 * calls by index, finish reason, usage; `reasoningFirst` when no reasoning came after content.
 */
export function assemble(chunks: ChatCompletionChunk[]) {
  let content = ''
  let reasoning = ''
  let reasoningFirst = true
  let role: string | undefined
  let finish: string | null = null
  const tools: Array<{ id: string; name: string; arguments: string }> = []
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      role ??= choice.delta.role
      if (choice.delta.reasoning_content && content !== '') reasoningFirst = false
      reasoning += choice.delta.reasoning_content ?? ''
      content += choice.delta.content ?? ''
      for (const call of choice.delta.tool_calls ?? []) {
        tools[call.index] ??= { id: '', name: '', arguments: '' }
        const tool = tools[call.index]!
        tool.id += call.id ?? ''
        tool.name += call.function?.name ?? ''
        tool.arguments += call.function?.arguments ?? ''
      }
      finish = choice.finish_reason ?? finish
    }
  }
  const usage = chunks.at(-1)?.usage
  return { role, content, reasoning, reasoningFirst, tools, finish, usage }
}

/** The recorded stream's events, one JSON object per line. */
export async function readEvents(url: URL): Promise<any[]> {
  return (await Bun.file(url).text())
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line))
}
