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
import { PRICED_MODEL, startGateway, startMocks, workspace } from './processes.ts'
import { meteredKey, TOKENS_CONCURRENCY } from './tokens.ts'
import { chatTarget, type Target } from './workload.ts'

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

const mocks = await startMocks(20)
const ws = workspace()
const sides: { name: string; pid: number; stop: () => Promise<void>; target: Target }[] = []
for (const name of ['plain', 'metered']) {
  const dir = join(ws.dir, name)
  mkdirSync(dir)
  const gw = await startGateway({ dir, remove: () => {} }, mocks, {
    binary: false,
    env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
  })
  const target =
    name === 'metered'
      ? chatTarget(gw.url, `mock/${PRICED_MODEL}`, stream, await meteredKey(gw, dir, false))
      : chatTarget(gw.url, 'mock/bench', stream, gw.key)
  sides.push({ name, pid: gw.pid, stop: () => gw.stop(), target })
}

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
for (const s of sides) await s.stop()
await mocks.stop()
ws.remove()
