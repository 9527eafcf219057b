/** Shared pieces of the provider tests: call contexts, byte streams, draining streams. */
import type { ProviderConfig } from '../../src/config/schema.ts'
import type { ChatCompletionChunk } from '../../src/operations/chat.ts'
import { gatedItems } from '../../src/pipeline/gated-read.ts'
import type { CallContext, StreamPlan, Timeouts } from '../../src/providers/types.ts'

export function callContext(
  provider: ProviderConfig,
  opts: { signal?: AbortSignal; timeouts?: Partial<Timeouts> } = {},
): CallContext {
  return {
    provider,
    model: provider.models[0]!,
    signal: opts.signal ?? new AbortController().signal,
    requestId: 'req_test',
    timeouts: { firstByteMs: 5_000, idleMs: 5_000, totalMs: 10_000, ...opts.timeouts },
  }
}

/** A byte stream that yields exactly the given pieces, one per read. */
export function bytes(...pieces: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const enc = new TextEncoder()
  let i = 0
  return new ReadableStream<Uint8Array>({
    pull(c) {
      const piece = pieces[i++]
      if (piece === undefined) c.close()
      else c.enqueue(typeof piece === 'string' ? enc.encode(piece) : piece)
    },
  })
}

/**
 * A stream plan (what an adapter's `stream()` resolves to) as a stream of its items: the body under
 * the plan's idle and total timeouts, through its stages, read as a whole answer is read
 * (`gatedItems`), each item handed over when the consumer asks for it (the read waits meanwhile,
 * and waiting on the consumer is not the upstream's silence). Cancelling refuses the next item:
 * the read stops there and lets the body go. The stream writer drives a plan itself; this reads
 * it as the writer's items, for the adapter's own tests.
 */
export function planItems<T>(plan: StreamPlan<T>): ReadableStream<T> {
  /** A read of the consumer's waits for an item / an item waits for a read. */
  let demand: (() => void) | null = null
  let offer: ((take: boolean) => void) | null = null
  let cancelled = false
  return new ReadableStream<T>(
    {
      start(controller) {
        const handOver = (item: T) =>
          new Promise<boolean>((resolve) => {
            const give = (take: boolean) => {
              if (take) controller.enqueue(item)
              resolve(take)
            }
            if (cancelled) give(false)
            else if (demand) {
              const read = demand
              demand = null
              give(true)
              read()
            } else offer = give
          })
        gatedItems(plan, { admit: handOver, ending: () => [] }).then(
          () => (cancelled ? undefined : controller.close()),
          (err) => (cancelled ? undefined : controller.error(err)),
        )
      },
      pull: () =>
        new Promise<void>((resolve) => {
          if (offer) {
            const give = offer
            offer = null
            give(true)
            resolve()
          } else demand = resolve
        }),
      cancel() {
        cancelled = true
        offer?.(false)
      },
    },
    { highWaterMark: 0 },
  )
}

/** Every item until the stream ends, and the error it ended with, if any. */
export async function drain<T>(stream: ReadableStream<T>): Promise<{ items: T[]; error?: unknown }> {
  const items: T[] = []
  try {
    for await (const item of stream) items.push(item)
    return { items }
  } catch (error) {
    return { items, error }
  }
}

/** What an OpenAI client rebuilds from chunks: content and tool calls per choice, finish reason, usage. */
export function assemble(chunks: ChatCompletionChunk[], choice = 0) {
  let content = ''
  let role: string | undefined
  let finish: string | null = null
  const tools: Array<{ id: string; type: string; name: string; arguments: string }> = []
  for (const chunk of chunks) {
    for (const c of chunk.choices) {
      if (c.index !== choice) continue
      role ??= c.delta.role
      content += c.delta.content ?? ''
      for (const call of c.delta.tool_calls ?? []) {
        tools[call.index] ??= { id: '', type: '', name: '', arguments: '' }
        const tool = tools[call.index]!
        tool.id += call.id ?? ''
        tool.type += call.type ?? ''
        tool.name += call.function?.name ?? ''
        tool.arguments += call.function?.arguments ?? ''
      }
      finish = c.finish_reason ?? finish
    }
  }
  return { role, content, tools, finish, usage: chunks.at(-1)?.usage }
}
