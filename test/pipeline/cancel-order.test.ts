/**
 * The order at a stream's end (src/pipeline/stream/writer.ts `finish`, stop 62): the upstream is
 * cancelled before the outcome is recorded (`onFinish`: the settlement's ledger work), at a cut and
 * when the client leaves, and a cut stream ends (and lets its upstream go) in the step that writes
 * its ending, not at the client's next read. Orders and counts, not times: what ran when, how many
 * of the upstream's chunks the gate was shown before it was let go.
 */
import { describe, expect, test } from 'bun:test'
import { outputTokenCount } from '../../src/limits/output-count.ts'
import type { ChatCompletionChunk } from '../../src/operations/chat.ts'
import { OutputAllowance } from '../../src/pipeline/output-allowance.ts'
import { ChunkGate } from '../../src/pipeline/output-cut.ts'
import { writeStream } from '../../src/pipeline/stream/writer.ts'
import { ChatChunkEncoder } from '../../src/surfaces/chat/stream-encoder.ts'

const WORDS = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen'
/** Tokens of one chunk's text. */
const PER_CHUNK = outputTokenCount(WORDS, 'o200k')

function chunk(index: number, content: string): ChatCompletionChunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index, delta: { content }, finish_reason: null, logprobs: null }],
  }
}

/** An upstream ignoring the cap: `n` choices, a chunk each per round, for ever; it logs its cancel. */
function upstream(n: number, log: string[]) {
  let sent = 0
  return new ReadableStream<ChatCompletionChunk>(
    {
      pull(c) {
        c.enqueue(chunk(sent++ % n, WORDS))
      },
      cancel() {
        log.push('cancel')
      },
    },
    { highWaterMark: 0 },
  )
}

/** The chat chunk gate over a fixed allowance of `limit`, counting the upstream's chunks it was shown (read). */
class CountingGate extends ChunkGate {
  read = 0
  constructor(limit: number, inputTokens = 0) {
    super(new OutputAllowance(limit, 'o200k'), inputTokens)
  }
  override admit(c: ChatCompletionChunk): boolean | Promise<boolean> {
    this.read++
    return super.admit(c)
  }
}

const frames = (body: string) =>
  body
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6))

describe('a stream lets its upstream go before its outcome is recorded', () => {
  test('a cut: the refused chunk is the last the upstream is asked for; cancel, then the outcome', async () => {
    const log: string[] = []
    // The cap falls inside the fifth chunk: the fifth would pass it and is refused, the last read.
    const gate = new CountingGate(5 * PER_CHUNK - 1, 7)
    const out = await writeStream(upstream(1, log), new ChatChunkEncoder('p/m', true), {
      keepaliveMs: 10_000,
      holdMs: 1_000,
      gate,
      onFinish: () => log.push('finish'),
    })
    if (out.status !== 'ok') throw new Error(out.error.code)
    const data = frames(await new Response(out.body).text())
    expect(data.at(-1)).toBe('[DONE]')
    expect(gate.cut).toBe(true)
    expect(gate.read).toBe(5)
    expect(gate.counted).toBeLessThanOrEqual(5 * PER_CHUNK - 1)
    expect(log).toEqual(['cancel', 'finish'])
  })

  test('a client that leaves: the upstream is cancelled before the outcome is recorded', async () => {
    const log: string[] = []
    const client = new AbortController()
    const out = await writeStream(upstream(1, log), new ChatChunkEncoder('p/m', false), {
      keepaliveMs: 10_000,
      holdMs: 1_000,
      signal: client.signal,
      onFinish: () => log.push('finish'),
    })
    if (out.status !== 'ok') throw new Error(out.error.code)
    const reader = out.body.getReader()
    await reader.read()
    client.abort()
    expect(log.slice(-2)).toEqual(['cancel', 'finish'])
  })
})
