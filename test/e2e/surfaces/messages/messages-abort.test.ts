/**
 * A client that disconnects from a Messages stream cancels the upstream request: passed through
 * to an anthropic provider, and translated from an openai one. An upstream that fails after the
 * first byte ends the stream with an Anthropic `error` event.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { waitFor } from '../../../support/chat-bed.ts'
import {
  hello,
  type MessagesBed,
  parseAnthropicSSE,
  startMessagesBed,
} from '../../../support/messages-bed.ts'

let bed: MessagesBed

beforeAll(async () => {
  // 300 ms between recorded events: a stream stays open for seconds.
  bed = await startMessagesBed({ eventDelayMs: 300 })
})
afterAll(async () => {
  await bed.stop()
})

async function openThenLeave(model: string): Promise<void> {
  const abort = new AbortController()
  const res = await bed.post({ model, max_tokens: 64, stream: true, messages: hello }, {}, abort.signal)
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  const first = await reader.read()
  expect(new TextDecoder().decode(first.value)).toContain('message_start')
  abort.abort()
  await reader.cancel().catch(() => {})
}

test('anthropic kind (pass-through): the fake upstream sees its stream cancelled', async () => {
  const before = bed.anthropic.cancelledStreams()
  await openThenLeave('anthropic/text')
  await waitFor(() => bed.anthropic.cancelledStreams() === before + 1, 5_000)
})

test('openai kind (translated): the mock upstream sees the request aborted', async () => {
  bed.mock.reset()
  await openThenLeave('mock/slow-stream')
  await waitFor(() => bed.mock.stats.aborted === 1, 5_000)
})

test('pass-through: the upstream error event mid-stream is relayed as it came, after the text so far', async () => {
  const res = await bed.post({
    model: 'anthropic/stream-error',
    max_tokens: 64,
    stream: true,
    messages: hello,
  })
  expect(res.status).toBe(200)
  const events = parseAnthropicSSE(await res.text()).filter((e) => e.event !== 'ping')
  expect(events[0]!.event).toBe('message_start')
  expect(events.at(-1)!.event).toBe('error')
  expect(events.at(-1)!.data.error.type).toBe('overloaded_error')
})

test('translated: an upstream stream cut halfway ends with an Anthropic error event', async () => {
  const res = await bed.post({
    model: 'mock/fault-cut-stream',
    max_tokens: 64,
    stream: true,
    messages: hello,
  })
  expect(res.status).toBe(200)
  const events = parseAnthropicSSE(await res.text()).filter((e) => e.event !== 'ping')
  expect(events[0]!.event).toBe('message_start')
  expect(events.map((e) => e.event)).not.toContain('message_stop')
  const last = events.at(-1)!
  expect(last.event).toBe('error')
  expect(last.data).toMatchObject({ type: 'error', error: { type: 'api_error' } })
})
