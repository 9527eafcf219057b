/**
 * @module
 * The tokens row's two routes under `perf record` (stop 62): native symbols where the `--cpu-prof`
 * profiles of tokens-prof.ts see only `(root)`, `fetch`, `drain`. Two gateways of one checkout
 * (plain key on `mock/bench`; metered key, TPM + TPD + budget, on `mock/bench-priced`), each
 * warmed, then each loaded alone at `--concurrency` (16) for `--seconds` while `perf record -g`
 * samples its event-loop thread (`-t` the process's own tid) or, with `--all`, every thread.
 * Leaves `plain.data` and `metered.data` in DIR; read them with `perf report -i DIR/metered.data
 * --no-children --sort sym`.
 *
 * bun scripts/bench/tokens-perf.ts DIR [--stream] [--warm N] [--seconds S] [--concurrency C] [--all]
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { option } from './argv.ts'
import { TOKENS_CONCURRENCY, withRouteSides } from './tokens.ts'
import type { Target } from './workload.ts'

const out = process.argv[2]
if (!out || out.startsWith('--')) {
  console.error(
    'usage: bun scripts/bench/tokens-perf.ts DIR [--stream] [--warm N] [--seconds S] [--concurrency C] [--all]',
  )
  process.exit(2)
}
mkdirSync(out, { recursive: true })
const warm = Number(option('--warm') ?? 15000)
const seconds = Number(option('--seconds') ?? 8)
const concurrency = Number(option('--concurrency') ?? TOKENS_CONCURRENCY)
const stream = process.argv.includes('--stream')

/** Requests at `concurrency` until `stop()`; how many were answered. */
function load(t: Target): { count: () => number; stop: () => Promise<number> } {
  let going = true
  let n = 0
  const workers = Array.from({ length: concurrency }, async () => {
    while (going) {
      const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body })
      if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`)
      await res.arrayBuffer()
      n++
    }
  })
  return {
    count: () => n,
    stop: async () => {
      going = false
      await Promise.all(workers)
      return n
    },
  }
}

await withRouteSides({ stream }, async (sides) => {
  // Warmed by count: `warm` requests each.
  for (const s of sides) {
    const l = load(s.target)
    while (l.count() < warm) await Bun.sleep(100)
    await l.stop()
  }
  for (const s of sides) {
    const l = load(s.target)
    await Bun.sleep(500)
    const perf = Bun.spawn(
      [
        'perf',
        'record',
        '-g',
        '-F',
        '999',
        '-o',
        join(out, `${s.name}.data`),
        ...(process.argv.includes('--all') ? ['-p', String(s.pid)] : ['-t', String(s.pid)]),
        '--',
        'sleep',
        String(seconds),
      ],
      { stdout: 'ignore', stderr: 'ignore' },
    )
    await perf.exited
    console.log(
      `${s.name}: ${await l.stop()} requests in ${seconds + 0.5} s (perf: ${join(out, `${s.name}.data`)})`,
    )
  }
})
