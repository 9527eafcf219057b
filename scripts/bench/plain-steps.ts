/**
 * @module
 * A `--cpu-prof` profile of a plain request's loop split into the request's steps, each sample
 * counted once, on the deepest step of its stack (so the steps add up to the whole): the steps
 * below, in µs a request over REQUESTS, with a second profile beside (the bare prototype's, from
 * `plain-prof.ts`). `--after-gap MS` and `--interval µs` as in prof-steps.ts.
 *
 * bun scripts/bench/plain-steps.ts PROFILE REQUESTS [OTHER OTHER_REQUESTS] [--interval µs] [--after-gap MS]
 */
import { readFileSync } from 'node:fs'
import { option } from './argv.ts'

/** A step: its name and the frames (`function file:line`, file from src/) that start it. */
const STEPS: [string, RegExp][] = [
  ['store: admission transaction (BEGIN, admit, COMMIT)', /^flush src\/store\/sqlite\/admissions\.ts/],
  ['store: database file check (statSync)', /^assertFile src\/store\/sqlite\/guard\.ts/],
  ['store: usage flush (request log, counters)', /^writeOutcomes src\/usage\/recorder\.ts/],
  ['upstream fetch (the call, its headers and signal)', /^upstreamFetch src\/providers\/http\.ts/],
  ['upstream answer read (readText)', /^readText src\/providers\/http\.ts/],
  ['answer relay (relayJson: usage, model id)', /^relayJson src\//],
  ['body edit for upstream (forward request)', /^request src\/surfaces\/chat\/forward\.ts/],
  ['attempt context (AbortSignal.any, Deadline)', /^contextFor src\/pipeline\/attempts\.ts/],
  ['attempt plan (circuits, key pick)', /^(AttemptPlan|next) src\/providers\/resilience/],
  ['request body read (bytes, deadline, decode)', /^readBodyText src\/pipeline\/body\.ts/],
  ['decode and validate (JSON.parse, schema)', /^decode src\/surfaces\/chat\/index\.ts/],
  ['auth (cache lookup, plan)', /^authenticateToken src\/auth/],
  ['key from header (bearer)', /^credential src\/surfaces/],
  ['routing (catalogue, plan, key list)', /^route src\/catalogue\/routing\.ts/],
  ['checks, routes, charge plan', /^(firstChecked|routes|planCharge) src\/pipeline/],
  ['finish (usage record queued, exchange)', /^\(anon\) src\/pipeline\/finish\.ts/],
  ['access log line and metrics (traffic.end)', /^end src\/traffic\/traffic\.ts/],
  ['exchange begin (ids, path, surface)', /^begin src\/traffic\/traffic\.ts/],
  ['request id, error hook (errors.ts onRequest)', /^\(anon\) src\/server\/errors\.ts/],
  ['host check', /^\(anon\) src\/server\/host\.ts/],
  ['log writer flush (write to stderr)', /^flush src\/util\/log\.ts/],
  [
    'pipeline rest (run, handle, callProvider, attempts)',
    /^(run|handle|callProvider|callWithAttempts|attempt|forwardCall) src\/pipeline/,
  ],
  ['app hooks and route (app.ts, surfaces.ts)', /^\(anon\) src\/(app\/app|server\/routes\/surfaces)\.ts/],
  ['the handler itself (bare-proxy.ts)', /^(handle|fetchFn|\(anon\)) scripts\/bench\/bare-proxy\.ts/],
  [
    'Elysia composed handler (generated code)',
    /^(handle|map|mapResponse|mapCompactResponse) (:|node_modules\/elysia)/,
  ],
]

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

const args = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'))
const interval = Number(option('--interval') ?? 1000)
const afterGap = option('--after-gap')

function steps(path: string): Map<string, number> {
  const p = JSON.parse(readFileSync(path, 'utf8')) as {
    nodes: Node[]
    samples: number[]
    timeDeltas: number[]
  }
  const parent = new Map<number, number>()
  const byId = new Map<number, Node>()
  for (const n of p.nodes) {
    byId.set(n.id, n)
    for (const c of n.children ?? []) parent.set(c, n.id)
  }
  const keyOf = (n: Node) =>
    `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^.*\/(src|scripts|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`
  let from = 0
  if (afterGap !== undefined)
    for (let i = 0; i < p.timeDeltas.length; i++) if (p.timeDeltas[i]! > Number(afterGap) * 1000) from = i
  const out = new Map<string, number>()
  for (let i = from; i < p.samples.length; i++) {
    let step = 'native, outside any step (server, promise jobs, GC)'
    for (let id: number | undefined = p.samples[i]; id !== undefined; id = parent.get(id)) {
      const k = keyOf(byId.get(id)!)
      const hit = STEPS.find(([, re]) => re.test(k))
      if (hit) {
        step = hit[0]
        break
      }
    }
    out.set(step, (out.get(step) ?? 0) + interval)
    out.set('whole loop, sampled', (out.get('whole loop, sampled') ?? 0) + interval)
  }
  return out
}

const a = steps(args[0]!)
const na = Number(args[1])
const b = args[2] ? steps(args[2]) : null
const nb = Number(args[3])
console.log('| step | µs a request | other |\n|---|---|---|')
for (const [k, v] of [...a].sort((x, y) => y[1] - x[1]))
  console.log(`| ${k} | ${(v / na).toFixed(1)} | ${b ? ((b.get(k) ?? 0) / nb).toFixed(1) : ''} |`)
if (b) for (const [k, v] of b) if (!a.has(k)) console.log(`| ${k} | 0 | ${(v / nb).toFixed(1)} |`)
