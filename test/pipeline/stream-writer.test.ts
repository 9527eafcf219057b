/**
 * The OpenAI-side stream writer (src/pipeline/stream-writer.ts with the chat encoder). It lives here, beside the adapters
 * whose streams it writes, because every test of it needs an adapter-shaped stream.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type MockUpstream, startMockUpstream } from '../../scripts/mock-upstream.ts'
import type { ChatCompletionChunk } from '../../src/operations/chat.ts'
import type { StreamOutcome } from '../../src/pipeline/stream/encoder.ts'
import type { StreamSource, WriteStreamOptions } from '../../src/pipeline/stream/types.ts'
import { writeStream } from '../../src/pipeline/stream/writer.ts'
import { createOpenAIAdapter } from '../../src/providers/openai/index.ts'
import { ChatChunkEncoder } from '../../src/surfaces/chat/stream-encoder.ts'
import { GatewayError } from '../../src/util/errors.ts'
import { ManualScheduler } from '../../src/util/scheduler.ts'
import { callContext } from '../providers/helpers.ts'
import { validateChunk, validateError } from '../support/openai-schemas.ts'

type WriteChatStreamOptions = WriteStreamOptions & { modelId: string; includeUsage: boolean }

/** The writer with the chat surface's encoder, as the pipeline runs a translated chat stream. */
type ChunkStream = ReadableStream<ChatCompletionChunk>

const writeChatStream = (chunks: StreamSource<ChatCompletionChunk>, opts: WriteChatStreamOptions) =>
  writeStream(chunks, new ChatChunkEncoder(opts.modelId, opts.includeUsage), opts)

const USAGE = { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }

function chunk(
  delta: ChatCompletionChunk['choices'][number]['delta'],
  finish: 'stop' | null = null,
): ChatCompletionChunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'upstream-name',
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  }
}
const ROLE = () => chunk({ role: 'assistant', content: '' })
const TEXT = (t: string) => chunk({ content: t })
const FINISH = () => chunk({}, 'stop')
const USAGE_CHUNK = (): ChatCompletionChunk => ({ ...chunk({}), choices: [], usage: USAGE })

class Wait {
  constructor(readonly ms: number) {}
}
class Fail {
  constructor(readonly err: unknown) {}
}
type Step = ChatCompletionChunk | Wait | Fail
const wait = (ms: number) => new Wait(ms)
const fail = (err: unknown) => new Fail(err)

/** An adapter-like stream that plays `steps` one per pull and records pulls and cancellation. */
function scripted(steps: Step[], clock?: ManualScheduler) {
  const state = { pulls: 0, cancelled: false }
  let i = 0
  const stream: ChunkStream = new ReadableStream<ChatCompletionChunk>(
    {
      async pull(c) {
        state.pulls++
        for (;;) {
          const step = steps[i++]
          if (step === undefined) return c.close()
          if (step instanceof Wait) await (clock ? clock.sleep(step.ms) : Bun.sleep(step.ms))
          else if (step instanceof Fail) return c.error(step.err)
          else return c.enqueue(step)
        }
      },
      cancel() {
        state.cancelled = true
      },
    },
    { highWaterMark: 0 },
  )
  return { stream, state }
}

function options(extra: Partial<WriteChatStreamOptions> = {}) {
  const finished: StreamOutcome[] = []
  const opts: WriteChatStreamOptions = {
    modelId: 'prefix/model',
    includeUsage: false,
    keepaliveMs: 10_000,
    holdMs: 1_000,
    onFinish: (r) => finished.push(r),
    ...extra,
  }
  return { opts, finished }
}

async function text(body: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(body).text()
}

/** The `data:` payloads of a body, in order; comments counted separately. */
function frames(body: string) {
  const events = body.split('\n\n').filter((e) => e !== '')
  return {
    data: events.filter((e) => e.startsWith('data: ')).map((e) => e.slice(6)),
    comments: events.filter((e) => e.startsWith(':')),
    all: events,
  }
}

async function ok(p: ReturnType<typeof writeChatStream>): Promise<ReadableStream<Uint8Array>> {
  const out = await p
  if (out.status !== 'ok') throw new Error(`expected ok, got ${out.error.code}`)
  return out.body
}

describe('writeChatStream', () => {
  test('re-serialises chunks with the gateway model id and ends with [DONE]; usage is kept for onFinish', async () => {
    const { stream } = scripted([ROLE(), TEXT('Hi'), FINISH(), USAGE_CHUNK()])
    const { opts, finished } = options()
    const body = await text(await ok(writeChatStream(stream, opts)))
    const { data, comments } = frames(body)
    expect(comments).toEqual([])
    expect(data.at(-1)).toBe('[DONE]')
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d))
    expect(chunks.length).toBe(3) // the usage chunk is withheld: the client did not ask
    for (const c of chunks) {
      expect(validateChunk(c)).toBeNull()
      expect(c.model).toBe('prefix/model')
      expect('usage' in c).toBe(false)
    }
    expect(chunks.map((c) => c.choices[0].delta.content ?? null)).toEqual(['', 'Hi', null])
    expect(finished.length).toBe(1)
    expect(finished[0]).toMatchObject({ usage: USAGE, error: null, aborted: false })
    expect(finished[0]!.ttftMs).toBeGreaterThanOrEqual(0)
  })

  test('includeUsage forwards the usage chunk, with usage: null on the others, as OpenAI does', async () => {
    const { stream } = scripted([ROLE(), TEXT('Hi'), FINISH(), USAGE_CHUNK()])
    const { opts } = options({ includeUsage: true })
    const { data } = frames(await text(await ok(writeChatStream(stream, opts))))
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d))
    for (const c of chunks) expect(validateChunk(c)).toBeNull()
    expect(chunks.map((c) => c.usage)).toEqual([null, null, null, USAGE])
    expect(chunks.at(-1).choices).toEqual([])
  })

  test('an upstream failure before the first chunk, within the hold, is an HTTP error', async () => {
    const refusal = new GatewayError(429, 'upstream_rate_limited', 'slow down')
    const { stream } = scripted([wait(20), fail(refusal)])
    const { opts, finished } = options({ holdMs: 1_000 })
    const out = await writeChatStream(stream, opts)
    expect(out).toEqual({ status: 'error', error: refusal })
    expect(finished).toEqual([
      { usage: null, error: refusal, ttftMs: null, started: false, aborted: false, relayedBytes: 0 },
    ])
  })

  test('past the hold the status is 200: keep-alives while waiting, then an error event and no [DONE]', async () => {
    const clock = new ManualScheduler()
    const { stream } = scripted(
      [wait(200), fail(new GatewayError(504, 'upstream_timeout', 'too slow'))],
      clock,
    )
    const { opts, finished } = options({ holdMs: 30, keepaliveMs: 40, scheduler: clock })
    const opened = writeChatStream(stream, opts)
    await clock.advance(30)
    const out = await opened
    expect(out.status).toBe('ok') // the hold ended before the failure arrived
    const body = text(await ok(Promise.resolve(out)))
    await clock.advance(170)
    const { data, comments, all } = frames(await body)
    expect(comments.length).toBe(5) // at the hold (30), then at 70, 110, 150, 190
    expect(comments.every((c) => c === ': keep-alive')).toBe(true)
    expect(all[0]).toBe(': keep-alive') // sent at once, so the 200 leaves without waiting
    expect(data.length).toBe(1)
    const error = JSON.parse(data[0]!)
    expect(validateError(error)).toBeNull()
    expect(error.error).toMatchObject({
      code: 'upstream_timeout',
      message: 'too slow',
      type: 'timeout_error',
    })
    expect(finished.length).toBe(1)
    expect(finished[0]!.error?.code).toBe('upstream_timeout')
  })

  test('keep-alive comments appear while the upstream is quiet between chunks, never as data', async () => {
    const clock = new ManualScheduler()
    const { stream } = scripted([ROLE(), wait(260), TEXT('late'), FINISH()], clock)
    const { opts } = options({ keepaliveMs: 50, scheduler: clock })
    const body = text(await ok(writeChatStream(stream, opts)))
    await clock.advance(260)
    const { data, comments, all } = frames(await body)
    expect(comments.length).toBe(5) // at 50, 100, 150, 200, 250
    expect(all[0]!.startsWith('data: ')).toBe(true)
    expect(data.length).toBe(4)
  })

  test('no keep-alives while chunks flow faster than the interval', async () => {
    const clock = new ManualScheduler()
    const steps: Step[] = [ROLE()]
    for (let i = 0; i < 10; i++) steps.push(wait(240), TEXT(`${i}`))
    const { stream } = scripted(steps, clock)
    const body = text(await ok(writeChatStream(stream, options({ keepaliveMs: 250, scheduler: clock }).opts)))
    await clock.advance(2_400)
    const { comments, data } = frames(await body)
    expect(data.length).toBe(12)
    expect(comments).toEqual([])
  })

  test('an error after the first chunk → error event, no [DONE]; a network error becomes a 502', async () => {
    // As Bun throws a socket's failure: a TypeError with a `code` (one without is the gateway's own).
    const socket = Object.assign(new TypeError('socket hang up'), { code: 'ECONNRESET' })
    const { stream } = scripted([ROLE(), TEXT('partial'), fail(socket)])
    const { opts, finished } = options()
    const { data } = frames(await text(await ok(writeChatStream(stream, opts))))
    expect(data.length).toBe(3)
    expect(data).not.toContain('[DONE]')
    const error = JSON.parse(data[2]!)
    expect(validateError(error)).toBeNull()
    expect(error.error.code).toBe('upstream_error')
    expect(error.error.message).not.toContain('socket hang up')
    expect(finished[0]!.error?.status).toBe(502)
  })

  test('reads the adapter only as fast as the client reads the body', async () => {
    const steps: Step[] = [ROLE()]
    for (let i = 0; i < 50; i++) steps.push(TEXT(`${i}`))
    const { stream, state } = scripted(steps)
    const reader = (await ok(writeChatStream(stream, options().opts))).getReader()
    await reader.read()
    await Bun.sleep(30)
    expect(state.pulls).toBeLessThanOrEqual(3)
    await reader.cancel()
  })

  test('cancelling the body cancels the adapter stream and reports aborted exactly once', async () => {
    const { stream, state } = scripted([ROLE(), wait(5_000), TEXT('never')])
    const { opts, finished } = options()
    const reader = (await ok(writeChatStream(stream, { ...opts, includeUsage: true }))).getReader()
    await reader.read()
    const pending = reader.read() // waiting on the adapter when the client leaves
    await reader.cancel()
    await pending
    expect(state.cancelled).toBe(true)
    expect(finished).toEqual([
      { usage: null, error: null, ttftMs: expect.any(Number), started: true, aborted: true, relayedBytes: 0 },
    ])
  })

  test('an aborted request signal ends the body and cancels the adapter stream', async () => {
    const client = new AbortController()
    const { stream, state } = scripted([ROLE(), wait(5_000), TEXT('never')])
    const { opts, finished } = options({ signal: client.signal })
    const body = await ok(writeChatStream(stream, opts))
    setTimeout(() => client.abort(), 30)
    const { data } = frames(await text(body))
    expect(data.length).toBe(1)
    expect(state.cancelled).toBe(true)
    expect(finished.length).toBe(1)
    expect(finished[0]!.aborted).toBe(true)
  })

  test('a client that leaves during the hold gets no body, and the adapter stream is cancelled', async () => {
    const client = new AbortController()
    const { stream, state } = scripted([wait(5_000), ROLE()])
    const { opts, finished } = options({ signal: client.signal, holdMs: 2_000 })
    setTimeout(() => client.abort(), 30)
    const out = await writeChatStream(stream, opts)
    expect(out.status).toBe('error')
    expect(out.status === 'error' && out.error.code).toBe('client_closed_request')
    expect(state.cancelled).toBe(true)
    expect(finished).toEqual([
      { usage: null, error: null, ttftMs: null, started: false, aborted: true, relayedBytes: 0 },
    ])
  })

  test('an empty adapter stream is a 200 with only [DONE]', async () => {
    const { stream } = scripted([])
    expect(await text(await ok(writeChatStream(stream, options().opts)))).toBe('data: [DONE]\n\n')
  })
})

describe('writeChatStream over real sockets', () => {
  let mock: MockUpstream
  beforeAll(async () => {
    mock = await startMockUpstream({ chunks: 3 })
  })
  afterAll(() => mock.stop())

  test('a client that disconnects from the gateway aborts the upstream request', async () => {
    const provider = {
      prefix: 'openai',
      kind: 'openai' as const,
      base_url: mock.url,
      models: [{ name: 'm', context_window: 1000, max_output_tokens: 100, features: [] }],
    }
    const outcomes: StreamOutcome[] = []
    const gateway = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const ctx = callContext(provider, { signal: request.signal })
        const chunks = await createOpenAIAdapter(provider).stream(
          { model: 'slow-stream-100ms', messages: [] },
          ctx,
        )
        const out = await writeChatStream(chunks, {
          ...options().opts,
          signal: request.signal,
          onFinish: (r) => outcomes.push(r),
        })
        if (out.status === 'error')
          return new Response(JSON.stringify(out.error.toBody()), { status: out.error.status })
        return new Response(out.body, { headers: { 'content-type': 'text/event-stream' } })
      },
    })
    try {
      const client = new AbortController()
      const res = await fetch(`http://127.0.0.1:${gateway.port}/`, { signal: client.signal })
      const reader = res.body!.getReader()
      const first = new TextDecoder().decode((await reader.read()).value)
      expect(first).toContain('"model":"prefix/model"')
      client.abort()
      const until = performance.now() + 1_000
      while ((mock.stats.aborted === 0 || outcomes.length === 0) && performance.now() < until)
        await Bun.sleep(5)
      expect(mock.stats.aborted).toBe(1)
      expect(outcomes.length).toBe(1)
      expect(outcomes[0]!.aborted).toBe(true)
    } finally {
      await gateway.stop(true)
    }
  })
})

describe('writeChatStream holding for content (DESIGN §10)', () => {
  const err = () => new GatewayError(502, 'upstream_stream_interrupted', 'cut')

  test('a failure after a role-only chunk is still an HTTP error: nothing was sent', async () => {
    const { stream, state } = scripted([ROLE(), fail(err())])
    const { opts, finished } = options({ holdForContent: true })
    const out = await writeChatStream(stream, opts)
    expect(out.status).toBe('error')
    expect(out.status === 'error' && out.error.code).toBe('upstream_stream_interrupted')
    expect(finished).toHaveLength(1)
    expect(state.pulls).toBe(2)
  })

  test('the role chunk goes out with the first content, in order', async () => {
    const { stream } = scripted([ROLE(), TEXT('Hi'), FINISH()])
    const { opts } = options({ holdForContent: true })
    const { data } = frames(await text(await ok(writeChatStream(stream, opts))))
    expect(data.slice(0, -1).map((d) => JSON.parse(d).choices[0].delta.content ?? null)).toEqual([
      '',
      'Hi',
      null,
    ])
    expect(data.at(-1)).toBe('[DONE]')
  })

  test('time to first token: from the upstream call (the wait for its headers included) to the first content, not the role chunk', async () => {
    const clock = new ManualScheduler()
    await clock.advance(1_000)
    const { stream } = scripted([ROLE(), wait(200), TEXT('Hi'), FINISH()], clock)
    // The upstream call began 600 ms before its headers came and the writer was made.
    const { opts, finished } = options({
      holdForContent: true,
      scheduler: clock,
      startedAt: clock.now() - 600,
    })
    const opened = writeChatStream(stream, opts)
    await clock.advance(200)
    await text(await ok(opened))
    expect(finished[0]!.ttftMs).toBe(800)
  })

  test('first token late with a fallback to go to: an HTTP error at firstToken.ms', async () => {
    const clock = new ManualScheduler()
    const { stream, state } = scripted([ROLE(), wait(5_000), TEXT('late')], clock)
    const { opts } = options({
      holdForContent: true,
      firstToken: { ms: 300, failOver: true },
      scheduler: clock,
    })
    const opened = writeChatStream(stream, opts)
    await clock.advance(300)
    const out = await opened
    expect(out.status === 'error' && out.error.code).toBe('upstream_timeout')
    expect(state.cancelled).toBe(true)
  })

  test('after content, continueWith splices the next source into the same stream', async () => {
    const first = scripted([ROLE(), TEXT('Hel'), fail(err())])
    const second = scripted([TEXT('lo'), FINISH()])
    const asked: string[] = []
    const { opts, finished } = options({
      holdForContent: true,
      continueWith: async (e) => {
        asked.push(e.code)
        return second.stream as never
      },
    })
    const { data } = frames(await text(await ok(writeChatStream(first.stream, opts))))
    const texts = data.slice(0, -1).map((d) => JSON.parse(d).choices[0].delta.content ?? '')
    expect(texts.join('')).toBe('Hello')
    expect(data.at(-1)).toBe('[DONE]')
    expect(asked).toEqual(['upstream_stream_interrupted'])
    expect(finished[0]).toMatchObject({ error: null, aborted: false })
  })

  test('continueWith answering null ends with the original error in-band', async () => {
    const first = scripted([ROLE(), TEXT('Hel'), fail(err())])
    const { opts, finished } = options({ holdForContent: true, continueWith: async () => null })
    const { data } = frames(await text(await ok(writeChatStream(first.stream, opts))))
    expect(JSON.parse(data.at(-1)!).error.code).toBe('upstream_stream_interrupted')
    expect(data).not.toContain('[DONE]')
    expect(finished[0]!.error?.code).toBe('upstream_stream_interrupted')
  })
})
