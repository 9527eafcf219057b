/**
 * @module
 * Preloaded into a gateway (`BUN_OPTIONS="--preload scripts/bench/alloc-probe.ts"`,
 * `ALLOC_PROBE_OUT=<file>`) by `alloc-count.ts`: the first SIGUSR2 forces a full collection and
 * counts the heap's cells by type; the second counts again, without collecting, and writes the
 * difference to the file. JSC's `objectTypeCounts` walks every cell not yet collected, so what was
 * allocated between the two signals is in the second count whether or not it is still referenced —
 * as long as no collection ran between them (the driver keeps a batch small and takes medians).
 */

import { heapStats } from 'bun:jsc'
import { writeFileSync } from 'node:fs'

const out = process.env.ALLOC_PROBE_OUT
let before: Record<string, number> | null = null
if (out) {
  process.on('SIGUSR2', () => {
    if (!before) {
      Bun.gc(true)
      before = { ...heapStats().objectTypeCounts }
      writeFileSync(out, '')
      return
    }
    const after = heapStats().objectTypeCounts
    const diff: Record<string, number> = {}
    for (const [k, v] of Object.entries(after)) {
      const d = v - (before[k] ?? 0)
      if (d !== 0) diff[k] = d
    }
    before = null
    writeFileSync(out, JSON.stringify(diff))
  })
}
