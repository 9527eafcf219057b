/**
 * The stream writer's deadlines on a `StreamPlan` (src/pipeline/stream-writer.ts): the hold, the
 * keep-alive and the upstream's idle and total timeouts share one timer, driven here by a
 * `ManualScheduler` — minutes of stream time, no real waiting. (test/e2e/surfaces/chat/chat-long-wait.test.ts
 * and test/providers/openai/faults.test.ts keep real-time checks of the same behaviours end to end.)
 */
import { describe, expect, test } from 'bun:test'
import type { ProviderConfig } from '../../src/config/schema.ts'
import type { StreamEncoder, StreamOutcome } from '../../src/pipeline/stream/encoder.ts'
import { writeStream } from '../../src/pipeline/stream/writer.ts'
import { upstreamFetch } from '../../src/providers/http.ts'
import { OpenAIChunkDecoder } from '../../src/providers/openai/stream.ts'
import { upstreamPlan } from '../../src/providers/stream-plan.ts'
import type { Timeouts } from '../../src/providers/types.ts'
import { ChatChunkEncoder } from '../../src/surfaces/chat/stream-encoder.ts'
import { GatewayError } from '../../src/util/errors.ts'
import { Deadline, ManualScheduler } from '../../src/util/scheduler.ts'
import { callContext } from '../providers/helpers.ts'

const PROVIDER = {
  prefix: 'up',
  kind: 'openai',
  base_url: 'http://127.0.0.1:1',
  api_key: 'k',
  models: [{ name: 'm' }],
} as ProviderConfig

const enc = new TextEncoder()
const dec = new TextDecoder()
const chunk = (content: string) =>
  `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}\n\n`

/** An upstream body the test writes to, and whether the writer cancelled it. */
function upstream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const state = { cancelled: false as unknown }
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c
    },
    cancel(reason) {
      state.cancelled = reason ?? true
    },
  })
  return { body, send: (text: string) => controller.enqueue(enc.encode(text)), state }
}

function open(timeouts: Partial<Timeouts>, hold = 1_000, keepalive = 5_000) {
  const clock = new ManualScheduler()
  const up = upstream()
  const finished: StreamOutcome[] = []
  const ctx = callContext(PROVIDER, { timeouts })
  const out = writeStream(
    upstreamPlan(up.body, ctx, new OpenAIChunkDecoder('up')),
    new ChatChunkEncoder('up/m', false),
    {
      holdMs: hold,
      keepaliveMs: keepalive,
      scheduler: clock,
      onFinish: (r) => finished.push(r),
    },
  )
  return { clock, up, out, finished }
}

async function ok(out: ReturnType<typeof open>['out']) {
  const r = await out
  if (r.status !== 'ok') throw r.error
  return r.body.getReader()
}

const next = async (reader: Awaited<ReturnType<typeof ok>>) => {
  const r = await reader.read()
  return r.done ? null : dec.decode(r.value)
}

describe('one timer per stream, on an injected clock', () => {
  test('the status is held for holdMs, then a keep-alive sends the 200; keep-alives every interval while the upstream is quiet', async () => {
    const { clock, up, out } = open({ idleMs: 600_000, totalMs: 3_600_000 }, 1_000, 15_000)
    let settled = false
    out.then(() => (settled = true))
    await clock.advance(999)
    expect(settled).toBe(false)
    await clock.advance(1)
    expect(settled).toBe(true)
    const reader = await ok(out)
    expect(await next(reader)).toBe(': keep-alive\n\n')
    const pending = next(reader)
    await clock.advance(14_999)
    up.send(chunk('late'))
    expect(await pending).toContain('"content":"late"')
    // Quiet again: one keep-alive per 15 s, measured from the last write.
    const ka = next(reader)
    await clock.advance(15_000)
    expect(await ka).toBe(': keep-alive\n\n')
    const ka2 = next(reader)
    await clock.advance(15_000)
    expect(await ka2).toBe(': keep-alive\n\n')
  })

  test('idle: an upstream silent for idleMs after the first byte → error event 504, upstream cancelled', async () => {
    const { clock, up, out, finished } = open({ idleMs: 30_000, totalMs: 3_600_000 }, 1_000, 100_000)
    up.send(chunk('a'))
    const reader = await ok(out)
    expect(await next(reader)).toContain('"content":"a"')
    const pending = next(reader)
    await clock.advance(29_999)
    expect(up.state.cancelled).toBe(false)
    await clock.advance(1)
    const frame = await pending
    expect(frame).toContain('"code":"upstream_timeout"')
    expect(frame).toContain('sent nothing for 30000 ms')
    expect(await next(reader)).toBeNull()
    expect(up.state.cancelled).not.toBe(false)
    expect(finished.map((f) => f.error?.status)).toEqual([504])
  })

  test('idle within the hold → an HTTP 504, not a 200', async () => {
    const { clock, out, finished } = open({ idleMs: 500, totalMs: 3_600_000 }, 2_000)
    await clock.advance(500)
    const r = await out
    expect(r.status).toBe('error')
    if (r.status === 'error') expect(r.error.code).toBe('upstream_timeout')
    expect(finished.length).toBe(1)
  })

  test('total: events that keep coming do not stretch totalMs', async () => {
    const { clock, up, out } = open({ idleMs: 30_000, totalMs: 100_000 }, 1_000, 100_000)
    up.send(chunk('0'))
    const reader = await ok(out)
    const frames: string[] = [(await next(reader))!]
    for (let t = 20_000; t <= 100_000; t += 20_000) {
      const pending = next(reader)
      await clock.advance(20_000)
      if (t < 100_000) up.send(chunk(String(t)))
      frames.push((await pending)!)
    }
    expect(frames.slice(0, 5).every((f) => f.includes('"content"'))).toBe(true)
    expect(frames[5]).toContain('did not finish within 100000 ms')
  })

  test('a client slow to read is not upstream silence', async () => {
    const { clock, up, out, finished } = open({ idleMs: 30_000, totalMs: 3_600_000 }, 1_000, 100_000)
    up.send(chunk('a'))
    const reader = await ok(out)
    expect(await next(reader)).toContain('"content":"a"')
    up.send(chunk('b'))
    await clock.advance(90_000) // nobody reads: the upstream is not being waited for
    expect(await next(reader)).toContain('"content":"b"')
    expect(finished).toEqual([])
  })
})

describe('the first-byte wait on the same timer', () => {
  test('an upstream that sends no headers for firstByteMs → 504, the request aborted through ctx.cancel; headers in time disarm it', async () => {
    const stalled = Promise.withResolvers<Response>()
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => stalled.promise })
    try {
      const clock = new ManualScheduler()
      const cancel = new AbortController()
      const ctx = {
        ...callContext(PROVIDER, {
          signal: cancel.signal,
          timeouts: { firstByteMs: 45_000, totalMs: 600_000 },
        }),
        cancel: (reason: GatewayError) => cancel.abort(reason),
        deadline: new Deadline(clock),
      }
      let error: unknown
      const call = upstreamFetch(
        `http://127.0.0.1:${server.port}/`,
        { method: 'POST', body: '{}' },
        ctx,
        () => {
          throw new Error('not reached')
        },
      ).catch((e) => (error = e))
      await clock.advance(44_999)
      expect(error).toBeUndefined()
      await clock.advance(1)
      await call
      expect(error).toBeInstanceOf(GatewayError)
      expect((error as GatewayError).status).toBe(504)
      expect((error as GatewayError).message).toContain('did not answer within 45000 ms')
      expect(cancel.signal.aborted).toBe(true)

      // Headers in time: the timer is disarmed (nothing fires when the clock moves on).
      const ok = {
        ...ctx,
        signal: new AbortController().signal,
        deadline: new Deadline(clock),
        cancel: undefined,
      }
      const quick = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('data: x\n\n') })
      try {
        const res = await upstreamFetch(`http://127.0.0.1:${quick.port}/`, { method: 'POST' }, ok, () => {
          throw new Error('not reached')
        })
        await clock.advance(60_000)
        expect(res.status).toBe(200)
        await res.body?.cancel()
      } finally {
        quick.stop(true)
      }
    } finally {
      stalled.resolve(new Response(''))
      server.stop(true)
    }
  })
})

describe('one encode per upstream read', () => {
  test('the items of one read are written together; when one throws, those before it still go out, then the error frame', async () => {
    const up = upstream()
    const ctx = callContext(PROVIDER, { timeouts: { idleMs: 60_000, totalMs: 600_000 } })
    /** One item per byte of the chunk. */
    const split: Transformer<Uint8Array, number> = {
      transform(chunk, c) {
        for (const b of chunk) c.enqueue(b - 48)
      },
    }
    const encoder: StreamEncoder<number> = {
      keepalive: enc.encode(': k\n\n'),
      encode: () => {
        throw new Error('encodeText is used')
      },
      encodeText: (n) => {
        if (n === 9) throw new GatewayError(502, 'upstream_error', 'bad item')
        return n === 0 ? null : `data: ${n}\n\n`
      },
      end: () => null,
      error: (err) => enc.encode(`data: error ${err.code}\n\n`),
      usage: () => null,
    }
    const finished: StreamOutcome[] = []
    const out = writeStream({ body: up.body, stages: [split], ctx }, encoder, {
      holdMs: 60_000,
      keepaliveMs: 60_000,
      scheduler: new ManualScheduler(),
      onFinish: (r) => finished.push(r),
    })
    up.send('120')
    const reader = await ok(out)
    expect(await next(reader)).toBe('data: 1\n\ndata: 2\n\n')
    up.send('3949')
    expect(await next(reader)).toBe('data: 3\n\n')
    expect(await next(reader)).toBe('data: error upstream_error\n\n')
    expect(await next(reader)).toBeNull()
    expect(finished.map((f) => f.error?.code)).toEqual(['upstream_error'])
  })
})
