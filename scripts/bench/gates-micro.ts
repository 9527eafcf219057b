/**
 * @module
 * The Messages, Responses and Gemini pass-through gates (`MessagesCutGate`, `ResponsesCutGate`,
 * `GeminiCutGate`) on recorded answers (shared/reference/recorded: Anthropic's text stream, 12
 * events; Responses' text stream, 9; Gemini's, 3, each event its own item as `eventFrames` yields
 * it), in process, for one or more checkouts, interleaved round by round (the order reversed every
 * other round): µs of CPU an answer (`admit` of every event). Not part of `bun run bench`:
 * `bun scripts/bench/gates-micro.ts [NAME=DIR]...` (default: this checkout).
 */
import { interleavedCpu } from './interleaved-cpu.ts'

const dirs = Bun.argv.slice(2).map((s) => s.split('=') as [string, string])
if (dirs.length === 0) dirs.push(['this', `${import.meta.dir}/../..`])
const recorded = `${import.meta.dir}/../../test/fixtures/reference/recorded`
const lines = async (name: string) =>
  (await Bun.file(`${recorded}/${name}`).text()).split('\n').filter((l) => l.trim() !== '')
/** Each recorded event framed as its provider frames it: with its `event:` line, or data alone. */
const events = {
  messages: (await lines('anthropic-text.chunks.txt')).map(
    (l) => `event: ${JSON.parse(l).type}\ndata: ${l}\n\n`,
  ),
  responses: (await lines('openai-responses-text.chunks.txt')).map(
    (l) => `event: ${JSON.parse(l).type}\ndata: ${l}\n\n`,
  ),
  gemini: (await lines('gemini-text.chunks.txt')).map((l) => `data: ${l}\n\n`),
}
const subjects = await Promise.all(
  dirs.map(async ([name, dir]) => {
    const { OutputAllowance } = await import(`${dir}/src/pipeline/output-allowance.ts`)
    const count = await import(`${dir}/src/limits/output-count.ts`)
    await count.prepareOutputCount?.()
    // Since stop 66 an allowance counts in the answering model's family; before, by provider kind.
    const counting = (kind: string, model: string): string => count.outputFamily?.(kind, model) ?? kind
    const gates = {
      messages: (await import(`${dir}/src/surfaces/messages/pass-through-cut.ts`)).MessagesCutGate,
      responses: (await import(`${dir}/src/surfaces/responses/pass-through-cut.ts`)).ResponsesCutGate,
      gemini: (await import(`${dir}/src/surfaces/gemini/pass-through.ts`)).GeminiCutGate,
    }
    return { name, OutputAllowance, gates, counting }
  }),
)
const N = 10_000
let sink = 0
for (const wire of ['messages', 'responses', 'gemini'] as const) {
  const frames = events[wire].map((e) => Buffer.from(e))
  const [kind, model] =
    wire === 'messages'
      ? ['anthropic', 'claude-sonnet-4-5']
      : wire === 'gemini'
        ? ['gemini', 'gemini-2.5-flash']
        : ['openai', 'gpt-4o']
  const answer = (s: (typeof subjects)[number]) => {
    const gate = new s.gates[wire](new s.OutputAllowance(100_000, s.counting(kind, model)), 12)
    // Fresh bytes, as each fetch read is.
    for (const f of frames) if (gate.admit(new Uint8Array(f)) !== true) throw new Error(`${s.name}: refused`)
    sink += gate.counted
  }
  interleavedCpu(`${wire} (${frames.length} events)`, subjects, N, answer)
}
if (sink === 0) console.log('')
