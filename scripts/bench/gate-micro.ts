/**
 * @module
 * The chat pass-through's output gate (`ChatCutGate`) on the bench's answer (the mock's 20-word
 * stream with its usage chunk: one read of 23 events, then `[DONE]`), in process, for one or more
 * checkouts, interleaved round by round (the order reversed every other round): µs of CPU an
 * answer, a stream's gate (`admit` of the two reads) and a JSON answer's (`admit` keeping what it
 * parsed, then `assembleChat`). Not part of `bun run bench`:
 * `bun scripts/bench/gate-micro.ts [NAME=DIR]...` (default: this checkout).
 */
import { buildStreamFrames } from '../mock-upstream/wire.ts'
import { interleavedCpu } from './interleaved-cpu.ts'

const dirs = Bun.argv.slice(2).map((s) => s.split('=') as [string, string])
if (dirs.length === 0) dirs.push(['this', `${import.meta.dir}/../..`])
const frames = buildStreamFrames({ model: 'gpt-4o-mini', created: 1, words: 20, usage: true, tools: [] })
const reads = [Buffer.concat(frames.slice(0, -1)), Buffer.from(frames[frames.length - 1]!)]
const subjects = await Promise.all(
  dirs.map(async ([name, dir]) => {
    const cut = await import(`${dir}/src/surfaces/chat/pass-through-cut.ts`)
    const { OutputAllowance } = await import(`${dir}/src/pipeline/output-allowance.ts`)
    // A checkout before o200k's own table (bpe58) loaded gpt-tokenizer's asynchronously first.
    await (await import(`${dir}/src/limits/output-count.ts`)).prepareOutputCount?.()
    return { name, cut, OutputAllowance }
  }),
)
const ctx = { modelId: 'mock/bench', provider: { prefix: 'mock' } }
const N = 20_000
let sink = 0
function answer(s: (typeof subjects)[number], whole: boolean): void {
  const gate = new s.cut.ChatCutGate(new s.OutputAllowance(64, 'openai'), 12, whole)
  // Fresh bytes, as each fetch read is.
  const items = reads.map((r) => new Uint8Array(r))
  for (const item of items) if (gate.admit(item) !== true) throw new Error(`${s.name}: refused`)
  if (whole) sink += s.cut.assembleChat(items, ctx).body.length
  sink += gate.counted
}
for (const mode of ['stream', 'json'] as const)
  interleavedCpu(mode, subjects, N, (s) => answer(s, mode === 'json'))
if (sink === 0) console.log('')
