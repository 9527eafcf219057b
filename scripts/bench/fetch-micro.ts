/**
 * @module
 * Where the gateway's upstream `fetch` spends (issue 46): one request at a time from this process
 * to the mock upstream (its own process, so the CPU read here is the caller's only), the same
 * request built and read several ways, variants interleaved round by round. Per variant: CPU of
 * this process a request (every thread: the loop and Bun's HTTP client thread) and of the loop's
 * thread alone (`/proc/self/task/<pid>/schedstat`), µs. Not part of `bun run bench`: run it as
 * `bun scripts/bench/fetch-micro.ts [rounds] [requests a round]`.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gatedItems } from '../../src/pipeline/gated-read.ts'
import { OutputAllowance } from '../../src/pipeline/output-allowance.ts'
import type { EncodeContext } from '../../src/pipeline/surface.ts'
import { eventFrames } from '../../src/providers/sse/event-frames.ts'
import type { CallContext } from '../../src/providers/types.ts'
import { assembleChat, ChatCutGate } from '../../src/surfaces/chat/pass-through-cut.ts'
import { chatBody } from './workload.ts'

const ROUNDS = Number(process.argv[2] ?? 5)
const N = Number(process.argv[3] ?? 1000)

const mock = Bun.spawn(
  [process.execPath, join(import.meta.dir, '..', 'mock-upstream.ts'), '--port', '0', '--chunks', '20'],
  {
    stdout: 'pipe',
    stderr: 'inherit',
  },
)
const reader = mock.stdout.getReader()
// The mock prints its base URL, `/v1` included.
const url = `${new TextDecoder().decode((await reader.read()).value).trim()}/chat/completions`

const body = chatBody('bench', false)
const bytes = new TextEncoder().encode(body)
const streamBody = chatBody('bench', true)
/** What the gated read takes of a call's context: the provider's label and timeouts (no request Deadline: a timer of its own). */
const ctx = {
  provider: { prefix: 'mock' },
  timeouts: { idleMs: 30_000, totalMs: 600_000, firstByteMs: 30_000 },
} as unknown as CallContext
const encodeCtx = { modelId: 'mock/bench', provider: { prefix: 'mock' } } as unknown as EncodeContext<unknown>
const MAX = 10 * 1024 * 1024
const record = {
  'content-type': 'application/json',
  accept: 'application/json',
  authorization: 'Bearer sk-mock',
}

/** The gateway's own way (src/providers/http.ts): the record spread with a traceparent, redirect manual, a merged signal, a timer. */
function gatewayInit(): RequestInit {
  const request = new AbortController()
  const own = new AbortController()
  return {
    method: 'POST',
    headers: { ...record, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    body,
    redirect: 'manual',
    signal: AbortSignal.any([request.signal, AbortSignal.any([own.signal])]),
  }
}

/** What a gateway request allocates besides the call (the pipeline's objects, ~`GARBAGE_KB` of small ones), to see whether collections it triggers land in the call. */
const GARBAGE_KB = Number(process.env.FETCH_MICRO_GARBAGE_KB ?? 64)
let sink: unknown
function garbage(): void {
  const xs: { a: number; b: string }[] = []
  for (let i = 0; i < GARBAGE_KB * 16; i++) xs.push({ a: i, b: `k${i}` })
  sink = xs
}
/** A live heap the size of a gateway's (`FETCH_MICRO_HEAP_MB`, default 0): marking scales with it. */
const live = Array.from({ length: Number(process.env.FETCH_MICRO_HEAP_MB ?? 0) * 16_000 }, (_, i) => ({
  i,
  s: `v${i}`,
}))

type Variant = () => Promise<unknown>
const VARIANTS: Record<string, Variant> = {
  'bare: record, string, .text()': async () =>
    (await fetch(url, { method: 'POST', headers: record, body })).text(),
  'body as Uint8Array': async () =>
    (await fetch(url, { method: 'POST', headers: record, body: bytes })).text(),
  'headers as Headers': async () =>
    (await fetch(url, { method: 'POST', headers: new Headers(record), body })).text(),
  'redirect manual': async () =>
    (await fetch(url, { method: 'POST', headers: record, body, redirect: 'manual' })).text(),
  'a signal (AbortController)': async () =>
    (
      await fetch(url, { method: 'POST', headers: record, body, signal: new AbortController().signal })
    ).text(),
  'decompress: false': async () =>
    (await fetch(url, { method: 'POST', headers: record, body, decompress: false } as RequestInit)).text(),
  '.json()': async () => (await fetch(url, { method: 'POST', headers: record, body })).json(),
  'body by reader': async () => {
    const res = await fetch(url, { method: 'POST', headers: record, body })
    const r = res.body!.getReader()
    for (;;) if ((await r.read()).done) break
  },
  'stream: .text()': async () =>
    (await fetch(url, { method: 'POST', headers: record, body: streamBody })).text(),
  'stream: body by reader': async () => {
    const res = await fetch(url, { method: 'POST', headers: record, body: streamBody })
    const r = res.body!.getReader()
    for (;;) if ((await r.read()).done) break
  },
  'stream: gated read + assembly (the metered JSON answer)': async () => {
    const res = await fetch(url, { method: 'POST', headers: record, body: streamBody })
    const gate = new ChatCutGate(new OutputAllowance(10_000, 'o200k'), 20, true)
    const stages = [eventFrames(MAX, 'mock', true)]
    const items = await gatedItems({ body: res.body!, stages, ctx }, gate, MAX)
    return assembleChat(items, encodeCtx).body
  },
  'the garbage alone (no fetch)': async () => garbage(),
  'bare + the garbage': async () => {
    garbage()
    return (await fetch(url, { method: 'POST', headers: record, body })).text()
  },
  'gateway init + timer, .text() + JSON.parse': async () => {
    const t = setTimeout(() => {}, 30_000)
    try {
      return JSON.parse(await (await fetch(url, gatewayInit())).text())
    } finally {
      clearTimeout(t)
    }
  },
}

const loopNs = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0])
const cpuUs = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

const names = Object.keys(VARIANTS)
const all: Record<string, { cpu: number[]; loop: number[] }> = {}
for (const n of names) {
  all[n] = { cpu: [], loop: [] }
  for (let i = 0; i < 200; i++) await VARIANTS[n]!()
}
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < names.length; k++) {
    const n = names[(k + r) % names.length]!
    const v = VARIANTS[n]!
    const c0 = cpuUs()
    const l0 = loopNs()
    for (let i = 0; i < N; i++) await v()
    all[n]!.cpu.push((cpuUs() - c0) / N)
    all[n]!.loop.push((loopNs() - l0) / 1000 / N)
  }
}
mock.kill()
console.log(`live heap ${live.length} objects; garbage ${GARBAGE_KB} KB a request${sink ? '' : ''}`)
const range = (xs: number[]) => `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))}`
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
console.log(`| variant | CPU a request, µs (median; range) | loop thread (median; range) |\n|---|---|---|`)
for (const n of names)
  console.log(
    `| ${n} | ${Math.round(median(all[n]!.cpu))} (${range(all[n]!.cpu)}) | ${Math.round(median(all[n]!.loop))} (${range(all[n]!.loop)}) |`,
  )
