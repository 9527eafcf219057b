/**
 * A client that goes away cancels the upstream request (DESIGN §4): mid-stream, while the status is
 * still held, and during a non-streamed call. The mock counts requests whose client left; each test
 * waits for its own abort, so none can land in the next test's count.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import type { Completion } from '../../../../src/store/index.ts'
import { type ChatBed, startChatBed, userMessage, waitFor } from '../../../support/chat-bed.ts'
import { beforeEach } from '../../../support/hooks.ts'

let bed: ChatBed
beforeAll(async () => {
  bed = await startChatBed()
})
afterAll(() => bed.stop())
beforeEach(() => {
  bed.mock.reset()
  recorded.length = 0
})

/** The acceptance bound: the upstream sees the abort within a second of the client's. */
const ABORT_BOUND_MS = 1_000

async function expectUpstreamAborted(): Promise<void> {
  const ms = await waitFor(() => bed.mock.stats.aborted === 1, ABORT_BOUND_MS)
  expect(ms).toBeLessThan(ABORT_BOUND_MS)
}

/** Every outcome the gateway records (status, error code ...), in order. */
const recorded: Completion[] = []
beforeAll(() => {
  const recorder = bed.gw.deps.recorder
  const record = recorder.record.bind(recorder)
  recorder.record = (c) => {
    recorded.push(c)
    record(c)
  }
})

/** The status recorded for the request a test made; the mock may notice the abort a tick earlier. */
async function recordedStatus(): Promise<number> {
  await waitFor(() => recorded.length === 1, 2_000)
  return recorded[0]!.status
}

describe('client disconnects cancel the upstream request', () => {
  test('openai client: AbortController mid-stream (slow-stream) → upstream aborted within 1 s', async () => {
    const controller = new AbortController()
    const stream = await bed
      .client()
      .chat.completions.create(
        { model: 'mock/slow-stream', messages: userMessage(), stream: true },
        { signal: controller.signal },
      )
    const seen: string[] = []
    // openai v7 ends the loop quietly when its own signal aborts the stream.
    for await (const chunk of stream) {
      seen.push(chunk.choices[0]?.delta.content ?? '')
      if (seen.length === 2) controller.abort()
    }
    expect(seen).toEqual(['', 'Hello'])
    await expectUpstreamAborted()
    expect(bed.mock.stats.streams).toBe(1)
    expect(await recordedStatus()).toBe(499)
    await waitFor(() => bed.gw.deps.metrics.openStreams === 0, 1_000)
  })

  test('fetch: cancelling the body reader mid-stream → upstream aborted within 1 s', async () => {
    const res = await bed.post({ model: 'mock/slow-stream', messages: userMessage(), stream: true })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    expect(first).toContain('chat.completion.chunk')
    await reader.cancel()
    await expectUpstreamAborted()
  })

  test('an abort while the first token is awaited (status already sent) → upstream aborted within 1 s', async () => {
    const controller = new AbortController()
    const res = await bed.post(
      { model: 'mock/slow-first-15000ms', messages: userMessage(), stream: true },
      {},
      controller.signal,
    )
    // stream_hold_ms (300) has passed: the 200 went out with a keep-alive comment.
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toStartWith(':')
    controller.abort()
    await expectUpstreamAborted()
  })

  test('an abort before the status is sent (during the hold) → upstream aborted within 1 s', async () => {
    const controller = new AbortController()
    const pending = bed
      .post(
        { model: 'mock/slow-first-15000ms', messages: userMessage(), stream: true },
        {},
        controller.signal,
      )
      .catch((e: unknown) => e)
    await waitFor(() => bed.mock.stats.requests === 1, 1_000)
    controller.abort()
    expect(await pending).toBeInstanceOf(Error)
    await expectUpstreamAborted()
  })

  test('non-streamed: aborting a request to a hanging upstream → upstream aborted within 1 s', async () => {
    const controller = new AbortController()
    const pending = bed
      .client()
      .chat.completions.create({ model: 'mock/hang', messages: userMessage() }, { signal: controller.signal })
      .catch((e: unknown) => e)
    await waitFor(() => bed.mock.stats.requests === 1, 1_000)
    controller.abort()
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError)
    await expectUpstreamAborted()
    // Recorded as the client leaving, not as an upstream failure.
    expect(await recordedStatus()).toBe(499)
  })

  test('the gateway serves normally afterwards', async () => {
    const res = await bed
      .client()
      .chat.completions.create({ model: 'mock/gpt-4o-mini', messages: userMessage() })
    expect(res.choices[0]!.message.content).toBe('Hello from the mock')
    expect(bed.mock.stats.aborted).toBe(0)
  })
})
