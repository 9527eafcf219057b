/**
 * @module
 * The chat byte relay on the lane's stream (the mock's 20-word answer with the usage chunk, all
 * events in one read), in process: ns a stream for `ChatBytes` of one or more checkouts,
 * interleaved rounds, CPU time of the process. `bun scripts/bench/relay-micro.ts [NAME=DIR]...`
 */
import { buildStreamFrames } from '../mock-upstream/wire.ts'

const dirs = Bun.argv.slice(2).map((s) => s.split('=') as [string, string])
if (dirs.length === 0) dirs.push(['this', `${import.meta.dir}/../..`])
const frames = buildStreamFrames({ model: 'bench', created: 1, words: 20, usage: true, tools: [] })
const body = Buffer.concat(frames)
const relays = await Promise.all(
  dirs.map(async ([name, dir]) => ({
    name,
    ChatBytes: (await import(`${dir}/src/surfaces/chat/relay-bytes.ts`)).ChatBytes,
  })),
)
const N = 2000
const cpu = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}
const out: Record<string, number[]> = {}
let sink = 0
for (let round = 0; round < 25; round++) {
  for (const r of relays) {
    const t0 = cpu()
    for (let i = 0; i < N; i++) {
      const enc = new r.ChatBytes('mock/bench', true, 32 << 20, 'mock')
      const o = enc.stage.encode(new Uint8Array(body))
      sink += o ? o.byteLength : 0
      sink += enc.stage.end()?.byteLength ?? 0
    }
    if (round < 5) continue // warm-up rounds
    const xs = out[r.name] ?? []
    out[r.name] = xs
    xs.push(((cpu() - t0) * 1000) / N)
  }
}
for (const [name, xs] of Object.entries(out)) {
  xs.sort((a, b) => a - b)
  console.log(
    `${name}: ${xs[xs.length >> 1]!.toFixed(0)} ns a stream (min ${xs[0]!.toFixed(0)}) — ${body.length} bytes, ${frames.length} events`,
  )
}
if (sink === 0) console.log('')
