/**
 * @module
 * A `--cpu-prof` profile split by function: for every function of the gateway's source, the loop
 * time it and its callees took (a sample counted once however often the function is on its
 * stack), and the time spent in each source file itself, both in µs a request over REQUESTS (the
 * requests the profiled process served, warm-up included). With a second profile, the same
 * figures for it beside (the plain gateway's, say, from `gov-prof.ts`).
 *
 * `--after-gap MS`: only the samples after the profile's last gap in sampling over MS (the loop idle
 * that long: plain-prof.ts leaves two seconds between the warm-up and the counted requests), so
 * REQUESTS are the counted ones only. Then a table of self time by function (every function,
 * native ones and the runtime's too: `(garbage collector)`, `fetch`, `(program)`).
 *
 * bun scripts/bench/prof-steps.ts PROFILE REQUESTS [OTHER OTHER_REQUESTS] [--top N] [--match RE] [--interval µs] [--after-gap MS]
 */
import { readFileSync } from 'node:fs'
import { option } from './argv.ts'

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: Node[]
  samples: number[]
  timeDeltas: number[]
}

const args = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'))
const top = Number(option('--top') ?? 60)
const match = new RegExp(option('--match') ?? '/src/')
/** The profiler's sampling interval, µs (bun --cpu-prof's default: 1 ms). */
const interval = Number(option('--interval') ?? 1000)
const afterGap = option('--after-gap')

/** Inclusive µs per function key and self µs per file, over the profile's samples. */
function split(path: string) {
  const p = JSON.parse(readFileSync(path, 'utf8')) as Profile
  const parent = new Map<number, number>()
  const byId = new Map<number, Node>()
  for (const n of p.nodes) {
    byId.set(n.id, n)
    for (const c of n.children ?? []) parent.set(c, n.id)
  }
  const keyOf = (n: Node) => {
    const f = n.callFrame
    const file = f.url.replace(/^.*\/(src|scripts|node_modules)\//, '$1/')
    return `${f.functionName || '(anon)'} ${file}:${f.lineNumber + 1}`
  }
  const incl = new Map<string, number>()
  const selfFile = new Map<string, number>()
  const selfFn = new Map<string, number>()
  let total = 0
  let from = 0
  if (afterGap !== undefined)
    for (let i = 0; i < p.timeDeltas.length; i++) if (p.timeDeltas[i]! > Number(afterGap) * 1000) from = i
  for (let i = from; i < p.samples.length; i++) {
    // A sample stands for one interval of the loop running: the deltas also hold the loop's idle
    // gaps (up to seconds), which would fall on whatever ran last.
    const dt = interval
    total += dt
    let id: number | undefined = p.samples[i]
    const leaf = byId.get(id!)!
    const file =
      leaf.callFrame.url.replace(/^.*\/(src|scripts|node_modules)\//, '$1/') || leaf.callFrame.functionName
    selfFile.set(file, (selfFile.get(file) ?? 0) + dt)
    const fn = keyOf(leaf)
    selfFn.set(fn, (selfFn.get(fn) ?? 0) + dt)
    const seen = new Set<string>()
    while (id !== undefined) {
      const n = byId.get(id)!
      if (match.test(n.callFrame.url)) {
        const k = keyOf(n)
        if (!seen.has(k)) {
          seen.add(k)
          incl.set(k, (incl.get(k) ?? 0) + dt)
        }
      }
      id = parent.get(id)
    }
  }
  return { incl, selfFile, selfFn, total }
}

const a = split(args[0]!)
const na = Number(args[1])
const b = args[2] ? split(args[2]) : null
const nb = Number(args[3])
const per = (x: number | undefined, n: number) => ((x ?? 0) / n).toFixed(1)
console.log(`total sampled: ${per(a.total, na)} µs a request${b ? ` (other: ${per(b.total, nb)})` : ''}`)
console.log('\n| function (inclusive) | µs a request | other |\n|---|---|---|')
for (const [k, v] of [...a.incl].sort((x, y) => y[1] - x[1]).slice(0, top))
  console.log(`| ${k} | ${per(v, na)} | ${b ? per(b.incl.get(k), nb) : ''} |`)
console.log('\n| file (self) | µs a request | other |\n|---|---|---|')
for (const [k, v] of [...a.selfFile].sort((x, y) => y[1] - x[1]).slice(0, top))
  console.log(`| ${k} | ${per(v, na)} | ${b ? per(b.selfFile.get(k), nb) : ''} |`)
console.log('\n| function (self) | µs a request | other |\n|---|---|---|')
for (const [k, v] of [...a.selfFn].sort((x, y) => y[1] - x[1]).slice(0, top))
  console.log(`| ${k} | ${per(v, na)} | ${b ? per(b.selfFn.get(k), nb) : ''} |`)
