/**
 * @module
 * A whole answer read through the output gate (DESIGN §11): a JSON request under a token or money
 * limit is streamed upstream and its items gated as they arrive, so the upstream can be let go at
 * the allowance rather than generate (and bill) the rest. Both routes use it: the translated one
 * over the adapter's chunk plan (`completeWithin`, output-cut.ts), a pass-through over its events
 * (call.ts). Read under the provider's idle and total timeouts (`guardStream`).
 *
 * @example
 * const chunks = await gatedItems(await adapter.stream(req, ctx), gate)
 */
import { responseTooLarge } from '../providers/body-limit.ts'
import { guardStream } from '../providers/guard-stream.ts'
import { type StreamPlan, SyncStages } from '../providers/stream-plan.ts'
import type { OutputGate } from './stream/types.ts'

/**
 * The plan's items as `gate` let them through, its ending in place of the first refused one; the
 * upstream is cancelled at the cut (or a failure). The body's reads run through the stages in the
 * same turn (`SyncStages`): a whole answer often comes in one read, each item gated as it is made.
 * `maxBytes`: the body's bound in bytes (a raw body; absent for a plan whose body yields items).
 */
export async function gatedItems<T>(
  plan: StreamPlan<T>,
  gate: OutputGate<T>,
  maxBytes?: number,
): Promise<T[]> {
  const { ctx } = plan
  const reader = guardStream(plan.body, ctx).getReader()
  const made: T[] = []
  const stages = new SyncStages<T>(plan.stages, (item) => made.push(item))
  const items: T[] = []
  let bytes = 0
  try {
    for (;;) {
      const r = await reader.read()
      if (r.done) stages.flush()
      else {
        if (maxBytes !== undefined) {
          bytes += (r.value as Uint8Array).byteLength
          if (bytes > maxBytes) throw responseTooLarge(ctx.provider.prefix, maxBytes, 'a response')
        }
        stages.push(r.value)
      }
      for (const item of made) {
        let ok = gate.admit(item)
        if (typeof ok !== 'boolean') ok = await ok
        if (!ok) {
          items.push(...gate.ending())
          return items
        }
        items.push(item)
      }
      made.length = 0
      if (r.done) return items
    }
  } finally {
    // Cut (or failed): the upstream is let go; it generates, and bills, no more.
    reader.cancel().catch(() => {})
  }
}
