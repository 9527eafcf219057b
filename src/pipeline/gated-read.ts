/**
 * @module
 * A whole answer read through the output gate (DESIGN §11): a JSON request under a token or money
 * limit is streamed upstream and its items gated as they arrive, so the upstream can be let go at
 * the allowance rather than generate (and bill) the rest. Both routes use it: the translated one
 * over the adapter's chunk plan (`completeWithin`, output-cut.ts), a pass-through over its events
 * (call.ts).
 *
 * Read straight off the body's reader (no second stream between) under the provider's idle and
 * total timeouts, kept on the request's one `Deadline` as `readText` keeps them: one timer a
 * request, armed once and re-armed only when it falls due early (a read that began later), never
 * once a read.
 *
 * @example
 * const chunks = await gatedItems(await adapter.stream(req, ctx), gate)
 */
import { responseTooLarge } from '../providers/body-limit.ts'
import { idleTimeout, streamReadError, totalLeft, totalTimeout } from '../providers/http.ts'
import { type StreamPlan, SyncStages } from '../providers/stream-plan.ts'
import type { GatewayError } from '../util/errors.ts'
import { realScheduler } from '../util/scheduler.ts'
import { release } from './body.ts'
import { gateItems } from './stream/items.ts'
import type { OutputGate } from './stream/types.ts'

/**
 * The plan's items as `gate` let them through, its ending in place of the first refused one; the
 * upstream is cancelled at the cut (or a failure). The body's reads run through the stages in the
 * same turn (`SyncStages`): a whole answer often comes in one read, each item gated as it is made.
 * `maxBytes`: the body's bound in bytes (a raw body; absent for a plan whose body yields items).
 * `reads`: the body's reads are put there as read, for the caller to `releaseReads` once it is done
 * with the items (which may be views of them).
 *
 * Timeouts: at most `idleMs` waiting for each read (not while the gate waits for the allowance to
 * grow: that is not the upstream's silence), at most `totalMs` from the attempt's start
 * (`totalLeft`) → 504 `upstream_timeout`. A body that fails with anything but a `GatewayError` →
 * 502 `upstream_stream_interrupted` (499 once the client left). Items a read made before a stage
 * failed in it are gated first, as the stream writer relays them first.
 */
export async function gatedItems<T>(
  plan: StreamPlan<T>,
  gate: OutputGate<T>,
  maxBytes?: number,
  reads?: Uint8Array[],
): Promise<T[]> {
  const { ctx } = plan
  const reader = plan.body.getReader()
  const items: T[] = []
  const stages = new SyncStages<T>(plan.stages, (item) => items.push(item))
  let bytes = 0
  const deadline = ctx.deadline
  const sched = deadline?.scheduler ?? realScheduler
  const { idleMs } = ctx.timeouts
  const totalAt = sched.now() + totalLeft(ctx)
  /** `now()` when the pending read began; -1 while nobody reads (the gate deciding, say). */
  let readSince = -1
  let timedOut: GatewayError | null = null
  const tick = (): void => {
    const now = sched.now()
    if (now >= totalAt) timedOut = totalTimeout(ctx)
    else if (readSince >= 0 && now - readSince >= idleMs) timedOut = idleTimeout(ctx)
    else {
      // A read that began after the timer was armed: its idle deadline is later still.
      timer.at(Math.min(totalAt, (readSince >= 0 ? readSince : now) + idleMs))
      return
    }
    // The pending read ends (done, or failed) and throws `timedOut` below.
    reader.cancel(timedOut).catch(() => {})
  }
  // The request's one timer when it has one (upstreamFetch is done with it), else one of its own.
  const timer = deadline ? deadline.own(tick) : sched.timer(tick)
  timer.at(Math.min(totalAt, sched.now() + idleMs))
  try {
    for (;;) {
      readSince = sched.now()
      let r: Awaited<ReturnType<typeof reader.read>>
      try {
        r = await reader.read()
      } catch (err) {
        throw timedOut ?? streamReadError(err, ctx)
      }
      readSince = -1
      if (timedOut) throw timedOut
      // What this read made goes after what earlier reads let through, gated from there.
      const from = items.length
      let failed: unknown
      try {
        if (r.done) stages.flush()
        else {
          if (maxBytes !== undefined) {
            bytes += (r.value as Uint8Array).byteLength
            if (bytes > maxBytes) throw responseTooLarge(ctx.provider.prefix, maxBytes, 'a response')
          }
          reads?.push(r.value as Uint8Array)
          stages.push(r.value)
        }
      } catch (err) {
        if (items.length === from) throw err
        failed = err
      }
      // As the stream writer gates a read (stream/items.ts): a promise only while the gate waits.
      let shut = gateItems(gate, items, from)
      if (shut !== true && shut !== false) shut = await shut
      if (shut) return items
      if (failed !== undefined) throw failed
      if (r.done) return items
    }
  } finally {
    timer.cancel()
    // Cut (or failed): the upstream is let go; it generates, and bills, no more.
    reader.cancel().catch(() => {})
  }
}

/**
 * The reads' memory given back now, not at the next collection: each read is a buffer of its own
 * (Bun's reader hands over a fresh `Uint8Array` a read), which the collector frees only in bulk —
 * after the allocator has purged the emptied pages, so the next reads fault them back in. Detached
 * here, a read's memory goes back to the allocator at once and the next request's read takes it
 * (stop 62: the tokens row's metered JSON answer, one 5.5 KB read a request). Only whole buffers
 * (a view of part of one may share it) and only once every view of them is done with: after this,
 * every view of a read is empty.
 */
export function releaseReads(reads: Uint8Array[]): void {
  for (const read of reads)
    if (read.byteOffset === 0 && read.byteLength === read.buffer.byteLength) release(read)
}
