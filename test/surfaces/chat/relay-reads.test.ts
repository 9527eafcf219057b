/**
 * The chat byte relay's buffers and Bun's response body (stop 62, docs/benchmarks/cost-waterfall.md
 * "the relay's reads"): Bun holds a chunk enqueued to a response body, uncopied, until the socket
 * takes it, so nothing the relay enqueues — nor a read an unfinished event is still carried in — may
 * be detached or reused. End to end: a real upstream over HTTP, the stream writer, a real server and
 * a client that reads slowly, large events spanning reads; a buffer given back too early reaches the
 * client empty or corrupt (checked: detaching the enqueued copy, or a read whose tail the relay
 * carries, fails it).
 */
import { describe, expect, test } from 'bun:test'
import type { ProviderConfig } from '../../../src/config/schema.ts'
import { writeStream } from '../../../src/pipeline/stream/writer.ts'
import { ChatBytes } from '../../../src/surfaces/chat/relay-bytes.ts'
import { ChatRelay } from '../../../src/surfaces/chat/relay-stream.ts'
import { callContext } from '../../providers/helpers.ts'

const enc = new TextEncoder()
const dec = new TextDecoder()
const MODEL = 'up/m'
const PROVIDER = {
  prefix: 'up',
  kind: 'openai',
  base_url: 'http://127.0.0.1:1',
  api_key: 'k',
  models: [{ name: 'm' }],
} as ProviderConfig

/** A chunk event of `n` bytes of content, a letter of its own for each `i`. */
const chunkData = (i: number, n: number, finish = false) =>
  `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${String.fromCharCode(97 + (i % 26)).repeat(n)}"},"finish_reason":${finish ? '"stop"' : 'null'}}],"usage":null}`

/** What the text relay (the rules) writes for `events`. */
function expected(events: string[]): string {
  const relay = new ChatRelay(MODEL, false, 'up')
  let out = ''
  for (const data of events) {
    const b = relay.encode({ data })
    if (b !== null) out += dec.decode(b)
  }
  return out + dec.decode(relay.end()!)
}

describe("the chat byte relay and Bun's response body", () => {
  test('Bun holds a chunk enqueued to a response body, uncopied, until the socket takes it', async () => {
    // Written over right after it is enqueued: a client reading slowly gets the new bytes, not the
    // ones enqueued. So no buffer the relay enqueues (or a view of it) may be given back or reused.
    const chunks = 8
    const size = 64 * 1024
    using server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch() {
        let i = 0
        return new Response(
          new ReadableStream<Uint8Array>(
            {
              pull(c) {
                if (i++ === chunks) return c.close()
                const bytes = new Uint8Array(size).fill(1)
                c.enqueue(bytes)
                bytes.fill(2)
              },
            },
            { highWaterMark: 0 },
          ),
        )
      },
    })
    const reader = (await fetch(`http://127.0.0.1:${server.port}/`)).body!.getReader()
    const got: Uint8Array[] = []
    for (;;) {
      await Bun.sleep(5)
      const r = await reader.read()
      if (r.done) break
      got.push(r.value)
    }
    const all = Buffer.concat(got)
    expect(all.length).toBe(chunks * size)
    expect(all.every((b) => b === 2)).toBe(true)
  })

  test('large events across reads to a slow client: every byte arrives as the text relay writes it', async () => {
    // 40 events of 48–200 KB, written in pieces that cut events mid-way (and hold several).
    const events = Array.from({ length: 40 }, (_, i) =>
      chunkData(i, 48_000 + ((i * 37_000) % 150_000), i === 39),
    )
    const body = enc.encode(`${events.map((d) => `data: ${d}\n\n`).join('')}data: [DONE]\n\n`)
    using upstream = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch() {
        let at = 0
        let n = 0
        return new Response(
          new ReadableStream<Uint8Array>({
            pull(c) {
              if (at >= body.length) return c.close()
              const size = [1_000, 300_000, 70_001, 9_000][n++ % 4]!
              // A copy of its own each piece, as a socket read would be.
              c.enqueue(body.slice(at, at + size))
              at += size
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        )
      },
    })
    using gateway = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch() {
        const up = await fetch(`http://127.0.0.1:${upstream.port}/`)
        const encoder = new ChatBytes(MODEL, false, 1 << 20, 'up')
        const ctx = callContext(PROVIDER, { timeouts: { idleMs: 30_000, totalMs: 60_000 } })
        const res = await writeStream({ body: up.body!, stages: [encoder.stage], ctx }, encoder, {
          holdMs: 10_000,
          keepaliveMs: 60_000,
          onFinish: () => {},
        })
        if (res.status !== 'ok') throw res.error
        return new Response(res.body, { headers: { 'content-type': 'text/event-stream' } })
      },
    })
    const res = await fetch(`http://127.0.0.1:${gateway.port}/`)
    const reader = res.body!.getReader()
    const got: Uint8Array[] = []
    for (let i = 0; ; i++) {
      // Slow: the server's writes back up while the relay reads on.
      if (i < 20) await Bun.sleep(20)
      const r = await reader.read()
      if (r.done) break
      got.push(r.value)
    }
    const text = dec.decode(Buffer.concat(got))
    expect(text.length).toBe(expected(events).length)
    expect(text === expected(events)).toBe(true)
  }, 30_000)
})
