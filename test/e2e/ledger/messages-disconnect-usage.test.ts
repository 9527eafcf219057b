/**
 * A Messages stream the client left is recorded with estimated tokens, passed through to an
 * anthropic provider (prompt tokens from its `message_start`, completion from the relayed
 * deltas) and translated from an openai one (both estimated).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Completion } from '../../../src/store/index.ts'
import { estimateTokens } from '../../../src/usage/estimate.ts'
import { waitFor } from '../../support/chat-bed.ts'
import { hello, type MessagesBed, startMessagesBed } from '../../support/messages-bed.ts'

let bed: MessagesBed
const recorded: Completion[] = []
beforeAll(async () => {
  bed = await startMessagesBed({ eventDelayMs: 300 })
  const recorder = bed.gw.deps.recorder
  const record = recorder.record.bind(recorder)
  recorder.record = (c) => {
    recorded.push(c)
    record(c)
  }
})
afterAll(() => bed.stop())

/** Reads until `n` text deltas arrived, then leaves; returns the recorded outcome and the text seen. */
async function leaveAfter(model: string, n: number): Promise<{ r: Completion; seen: string }> {
  recorded.length = 0
  const res = await bed.post({ model, max_tokens: 256, stream: true, messages: hello })
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let buf = ''
  let seen = ''
  let deltas = 0
  while (deltas < n) {
    const { value, done } = await reader.read()
    if (done) throw new Error('the stream ended before the client left')
    buf += dec.decode(value, { stream: true })
    for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
      const frame = buf.slice(0, i)
      buf = buf.slice(i + 2)
      const data = frame.split('\n').find((l) => l.startsWith('data: '))
      const ev = data ? JSON.parse(data.slice(6)) : null
      if (ev?.type === 'content_block_delta' && ev.delta?.type === 'text_delta') {
        seen += ev.delta.text
        deltas++
      }
    }
  }
  await reader.cancel()
  await waitFor(() => recorded.length === 1, 3_000)
  return { r: recorded[0]!, seen }
}

test('anthropic kind (pass-through): prompt tokens as the upstream reported them, completion estimated', async () => {
  const { r, seen } = await leaveAfter('anthropic/text', 3)
  expect(r.status).toBe(499)
  expect(r.completionTokens!).toBeGreaterThanOrEqual(estimateTokens(seen.length))
  expect(r.completionTokens!).toBeLessThanOrEqual(estimateTokens(seen.length) + 20)
  expect(r.promptTokens!).toBeGreaterThan(0)
}, 15_000)

test('openai kind (translated): both estimated', async () => {
  const { r, seen } = await leaveAfter('mock/slow-stream', 2)
  expect(r.status).toBe(499)
  expect(seen.length).toBeGreaterThan(0)
  expect(r.completionTokens!).toBeGreaterThanOrEqual(estimateTokens(seen.length))
  expect(r.promptTokens!).toBeGreaterThan(0)
}, 15_000)
