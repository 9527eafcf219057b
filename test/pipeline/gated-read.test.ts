/**
 * A whole answer read through the output gate (src/pipeline/gated-read.ts): straight off the body's
 * reader, its idle and total timeouts on the request's one `Deadline` — driven here by a
 * `ManualScheduler`, so no test waits in real time. (These were `guardStream`'s, the second
 * stream the read went through until 2026-11-29.)
 */
import { describe, expect, test } from 'bun:test'
import type { ProviderConfig } from '../../src/config/schema.ts'
import { callProvider } from '../../src/pipeline/call.ts'
import { gatedItems, releaseReads } from '../../src/pipeline/gated-read.ts'
import { OutputAllowance } from '../../src/pipeline/output-allowance.ts'
import type { OutputGate } from '../../src/pipeline/stream/types.ts'
import type { StreamPlan, Timeouts } from '../../src/providers/types.ts'
import { chatForwarding } from '../../src/surfaces/chat/forward.ts'
import { ChatCutGate } from '../../src/surfaces/chat/pass-through-cut.ts'
import { GatewayError } from '../../src/util/errors.ts'
import { Deadline, ManualScheduler, type Scheduler } from '../../src/util/scheduler.ts'
import { bytes, callContext } from '../providers/helpers.ts'

const PROVIDER = { prefix: 'up', kind: 'openai', models: [{ name: 'm' }] } as ProviderConfig

/** A body the test feeds item by item, and what cancelled it. */
function source() {
  let controller!: ReadableStreamDefaultController<number>
  const state = { cancelled: false as unknown }
  const body = new ReadableStream<number>(
    {
      start(c) {
        controller = c
      },
      cancel(reason) {
        state.cancelled = reason ?? true
      },
    },
    { highWaterMark: 0 },
  )
  return { body, controller: () => controller, state }
}

/** A scheduler over `clock` that counts how often its timers are armed. */
function counting(clock: ManualScheduler): Scheduler & { arms: number } {
  const s = {
    arms: 0,
    now: () => clock.now(),
    timer(fire: () => void) {
      const t = clock.timer(fire)
      return {
        at(time: number) {
          s.arms++
          t.at(time)
        },
        cancel: () => t.cancel(),
      }
    },
  }
  return s
}

function plan(
  body: ReadableStream<number>,
  timeouts: Partial<Timeouts>,
  scheduler: Scheduler,
  signal?: AbortSignal,
): StreamPlan<number> {
  const ctx = { ...callContext(PROVIDER, { timeouts, signal }), deadline: new Deadline(scheduler) }
  return { body, stages: [], ctx }
}

const all: OutputGate<number> = { admit: () => true, ending: () => [] }
const code = (e: unknown) => [(e as GatewayError).status, (e as GatewayError).code]

describe('gatedItems', () => {
  test('passes items and the end through; one timer a request, not one a read', async () => {
    const clock = new ManualScheduler()
    const sched = counting(clock)
    const src = source()
    const read = gatedItems(plan(src.body, { idleMs: 1_000 }, sched), all)
    for (let i = 0; i < 20; i++) {
      src.controller().enqueue(i)
      await clock.advance(10)
    }
    src.controller().close()
    expect(await read).toEqual([...Array(20).keys()])
    // Armed at the start and never again: 200 ms of reads never reached the 1 s idle deadline.
    expect(sched.arms).toBe(1)
  })

  test('a gap longer than idleMs → 504 upstream_timeout, and the body is cancelled', async () => {
    const clock = new ManualScheduler()
    const src = source()
    const read = gatedItems(plan(src.body, { idleMs: 80 }, clock), all).catch((e: unknown) => e)
    src.controller().enqueue(1)
    await clock.advance(50)
    src.controller().enqueue(2)
    // 50 + 79 ms: past the first read's deadline but not the second's; re-armed for it, not failed.
    await clock.advance(79)
    src.controller().enqueue(3)
    await clock.advance(200)
    const err = await read
    expect(code(err)).toEqual([504, 'upstream_timeout'])
    expect((err as GatewayError).message).toContain('sent nothing for 80 ms')
    expect(src.state.cancelled).toBe(err)
  })

  test('a gate waiting for the allowance to grow is not the upstream being silent', async () => {
    const clock = new ManualScheduler()
    const src = source()
    let release!: (ok: boolean) => void
    const slow: OutputGate<number> = {
      admit: (n) => (n === 1 ? new Promise<boolean>((r) => (release = r)) : true),
      ending: () => [],
    }
    const read = gatedItems(plan(src.body, { idleMs: 50 }, clock), slow)
    src.controller().enqueue(1)
    await clock.advance(500) // the gate deliberates; the upstream is not being asked
    release(true)
    src.controller().enqueue(2)
    src.controller().close()
    await clock.advance(10)
    expect(await read).toEqual([1, 2])
  })

  test('totalMs bounds the whole read even while items keep coming', async () => {
    const clock = new ManualScheduler()
    const src = source()
    const read = gatedItems(plan(src.body, { idleMs: 1_000, totalMs: 200 }, clock), all).catch(
      (e: unknown) => e,
    )
    let sent = 0
    for (; sent < 20 && src.state.cancelled === false; sent++) {
      src.controller().enqueue(sent)
      await clock.advance(30)
    }
    expect(sent).toBe(7) // at 210 ms
    const err = await read
    expect(code(err)).toEqual([504, 'upstream_timeout'])
    expect((err as GatewayError).message).toContain('did not finish within 200 ms')
  })

  test('a body failure → 502 upstream_stream_interrupted (a decoder exception: 500 internal_error); a GatewayError passes as it is; 499 once the client left', async () => {
    const failing = (err: unknown) =>
      new ReadableStream<number>({
        start(c) {
          c.enqueue(1)
          c.error(err)
        },
      })
    const read = (body: ReadableStream<number>, signal?: AbortSignal) =>
      gatedItems(plan(body, {}, new ManualScheduler(), signal), all).catch((e: unknown) => e)
    // As Bun throws a socket's failure: a TypeError with a `code`.
    const socket = Object.assign(new TypeError('The socket connection was closed'), { code: 'ECONNRESET' })
    expect(code(await read(failing(socket)))).toEqual([502, 'upstream_stream_interrupted'])
    // What the stream's decoders throw without one is the gateway's own fault.
    expect(code(await read(failing(new TypeError('null is not an object'))))).toEqual([500, 'internal_error'])
    const own = new GatewayError(502, 'upstream_invalid_response', 'bad')
    expect(await read(failing(own))).toBe(own)
    const client = new AbortController()
    client.abort()
    expect(code(await read(failing(new DOMException('aborted', 'AbortError')), client.signal))).toEqual([
      499,
      'client_closed_request',
    ])
  })

  test('a refused item ends the read with the ending, and the body is let go', async () => {
    const src = source()
    const cut: OutputGate<number> = { admit: (n) => n < 2, ending: () => [-1] }
    const read = gatedItems(plan(src.body, {}, new ManualScheduler()), cut)
    for (let i = 0; i < 4; i++) src.controller().enqueue(i)
    expect(await read).toEqual([0, 1, -1])
    expect(src.state.cancelled).toBe(true)
  })

  test('what a read made before a stage failed in it is gated first, then the failure is thrown', async () => {
    const seen: number[] = []
    const stage: Transformer<number, number> = {
      transform(n, c) {
        c.enqueue(n)
        c.enqueue(n + 1)
        throw new GatewayError(502, 'upstream_invalid_response', 'bad event')
      },
    }
    const body = new ReadableStream<number>({
      start(c) {
        c.enqueue(10)
      },
    })
    const p = { ...plan(body, {}, new ManualScheduler()), stages: [stage] }
    const watch: OutputGate<number> = {
      admit: (n) => {
        seen.push(n)
        return true
      },
      ending: () => [],
    }
    const err = await gatedItems(p, watch).catch((e: unknown) => e)
    expect(seen).toEqual([10, 11])
    expect(code(err)).toEqual([502, 'upstream_invalid_response'])
  })
})

describe('a metered JSON answer gives its reads back once assembled', () => {
  const chunk = (text: string, finish: string | null = null) =>
    `data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"up","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":${finish === null ? null : `"${finish}"`}}]}\n\n`
  const answer = [chunk('one '), chunk('two '), chunk('three', 'stop'), 'data: [DONE]\n\n']

  test('the pass-through detaches each read after the assembly; the answer is whole', async () => {
    // Two reads, the second ending an event the first began: what the reader handed over.
    const text = answer.join('')
    const reads = [Buffer.from(text.slice(0, 300)), Buffer.from(text.slice(300))].map(
      (b) => new Uint8Array(b),
    )
    const ctx = callContext(PROVIDER)
    const result = await callProvider({
      deps: {} as never,
      surface: {} as never,
      adapter: { forward: async () => new Response(bytes(...reads)) } as never,
      ctx,
      encodeCtx: { modelId: 'gw/m', provider: { prefix: 'up' } } as never,
      stream: false,
      call: {
        forward: { body: '{}', path: '/chat/completions', streamed: true } as never,
        relay: chatForwarding,
      },
      headers: {},
      finish: () => {},
      signal: ctx.signal,
      gate: new ChatCutGate(new OutputAllowance(10_000, 'o200k'), 5, true),
    })
    expect(result.ok).toBe(true)
    const body = (await (result as { response: Response }).response.json()) as {
      model: string
      choices: { message: { content: string } }[]
    }
    expect(body.choices[0]?.message.content).toBe('one two three')
    expect(body.model).toBe('gw/m')
    // Before: the reads were left to the collector, which frees them in bulk (stop 62).
    for (const read of reads) {
      expect(read.byteLength).toBe(0)
      expect((read.buffer as ArrayBuffer & { detached: boolean }).detached).toBe(true)
    }
  })

  test('releaseReads detaches whole buffers only, once', () => {
    const whole = new Uint8Array(64)
    const shared = new Uint8Array(64)
    const part = shared.subarray(0, 32)
    releaseReads([whole, part, whole])
    expect(whole.byteLength).toBe(0)
    // A view of part of a buffer may share it with what is still in use: left to the collector.
    expect(part.byteLength).toBe(32)
    expect(shared.byteLength).toBe(64)
  })
})
