/**
 * @module
 * An upstream stream described rather than piped: the raw body, and the transformers (SSE parse,
 * the adapter's decoder) to run it through. The stream writer drives the transformers itself,
 * synchronously, in the same read as the body chunk (`SyncStages`), so a streamed response
 * crosses one JS stream stage instead of four (BENCHMARKS.md, finding 3). The writer also owns
 * the plan's idle / total timeouts (a whole answer read through the gate keeps its own:
 * pipeline/gated-read.ts).
 *
 * @example
 * return upstreamPlan(res.body, ctx, new OpenAIChunkDecoder(label))   // an adapter's stream()
 */

import { maxResponseBytes } from './body-limit.ts'
import { sseParser } from './sse/index.ts'
import type { CallContext, StreamPlan } from './types.ts'
import { invalidResponse } from './upstream-errors.ts'

export type { StreamPlan } from './types.ts'

/** The upstream's SSE body, parsed (under `max_response_bytes` per event) and then run through `stages`. */
export function upstreamPlan<T>(
  body: ReadableStream<Uint8Array>,
  ctx: CallContext,
  ...stages: Array<Transformer<any, any>>
): StreamPlan<T> {
  const parse = sseParser({ maxEventBytes: maxResponseBytes(ctx.provider), label: ctx.provider.prefix })
  return { body, stages: [parse, ...stages], ctx }
}

/**
 * `upstreamPlan` over a streamed answer's body, parsed by `decoder` into chunks; an answer with no
 * body → 502 `upstream_invalid_response`.
 */
export function answerPlan<T>(
  res: Response,
  ctx: CallContext,
  decoder: Transformer<any, any>,
): StreamPlan<T> {
  if (!res.body) throw invalidResponse(ctx.provider.prefix, 'the stream has no body')
  return upstreamPlan(res.body, ctx, decoder)
}

export function isStreamPlan<T>(s: ReadableStream<T> | StreamPlan<T>): s is StreamPlan<T> {
  return !(s instanceof ReadableStream)
}

/**
 * Runs transformers back to back without streams: what stage i enqueues goes straight into stage
 * i + 1's `transform`, and the last stage's output to `sink`. A stage that throws (or calls
 * `error`) throws out of `push` / `flush`. One instance per stream.
 */
export class SyncStages<T> {
  private readonly head: (chunk: unknown) => void
  private readonly controllers: Shim[] = []

  constructor(
    private readonly stages: ReadonlyArray<Transformer<any, any>>,
    sink: (item: T) => void,
  ) {
    let next = sink as (chunk: unknown) => void
    for (let i = stages.length - 1; i >= 0; i--) {
      const stage = stages[i]!
      const controller = new Shim(next)
      this.controllers[i] = controller
      const transform = stage.transform
      next = transform
        ? (chunk) => transform.call(stage, chunk, controller)
        : (chunk) => controller.enqueue(chunk)
    }
    this.head = next
    for (let i = 0; i < stages.length; i++) {
      const start = stages[i]!.start
      if (start) start.call(stages[i], this.controllers[i] as never)
    }
  }

  push(chunk: unknown): void {
    this.head(chunk)
  }

  /** The end of the body: each stage's `flush`, in order, its output through the stages after it. */
  flush(): void {
    for (let i = 0; i < this.stages.length; i++) {
      const flush = this.stages[i]!.flush
      if (flush) flush.call(this.stages[i], this.controllers[i] as never)
    }
  }
}

/** Enough of `TransformStreamDefaultController` for the gateway's transformers. */
class Shim {
  readonly desiredSize = 1
  constructor(readonly enqueue: (chunk: unknown) => void) {}
  error(reason: unknown): never {
    throw reason
  }
  terminate(): void {}
}
