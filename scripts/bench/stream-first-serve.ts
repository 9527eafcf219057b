/**
 * @module
 * One server of the stream-to-the-first-byte micro (stream-first-micro.ts): `Bun.serve` answering
 * `POST /chat/completions` from the mock upstream in one of these ways, so what a stream costs
 * beyond a JSON answer can be taken apart without the pipeline around it:
 *
 * - `json`: the upstream's JSON answer read whole (`.text()`), answered as a string;
 * - `native`: the upstream's stream handed to Bun as the body (`new Response(upstream.body)`);
 * - `read-whole`: the stream read by a reader to its end, answered as one body (the reader alone);
 * - `js-out`: the stream read natively, answered by a JS pull stream of one chunk (the response
 *   stream alone);
 * - `js`: the upstream's stream read by a reader into a pull `ReadableStream` (no edits);
 *   `js-hold`: the same with the first read before the response, as the writer holds it;
 *   `js-hold-busy`: that with 100 µs of work after the first enqueue, in the same turn;
 * - `direct`, `direct-hold`: `js`, `js-hold` as Bun's `type: 'direct'` stream;
 * - `writer`: the gateway's chat pass-through stream — `writeStream` over a plan whose stage is
 *   `ChatBytes`, held for content, one `Deadline` timer — from the checkout `SRC` (its `src/`);
 *   `writer-pass`: the same with a pass-through stage in place of the relay. `FINISH_US` in the
 *   environment: the stream's outcome (`onFinish`) busy for that long, as the gateway's
 *   bookkeeping is.
 *
 * `bun scripts/bench/stream-first-serve.ts <upstream base> <variant> [SRC]` prints `{"port","pid"}`.
 */

const [upstream, variant, src = `${import.meta.dir}/../../src`] = Bun.argv.slice(2)
if (!upstream || !variant) {
  console.error('usage: bun scripts/bench/stream-first-serve.ts <upstream base> <variant> [SRC]')
  process.exit(2)
}
const url = `${upstream}/chat/completions`
const SSE = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' }

const { writeStream } = await import(`${src}/pipeline/stream/writer.ts`)
const { ChatBytes } = await import(`${src}/surfaces/chat/relay-bytes.ts`)
const { Deadline, realScheduler } = await import(`${src}/util/scheduler.ts`)

/** What a `type: 'direct'` stream's `pull` is given: Bun's sink. */
interface DirectSink {
  write(bytes: Uint8Array): unknown
  flush(): unknown
  close(): void
}

const FINISH_US = Number(process.env.FINISH_US ?? 0)
const provider = { prefix: 'mock', kind: 'openai', base_url: upstream, api_key: 'x', models: [] }
const timeouts = { firstByteMs: 30_000, idleMs: 30_000, totalMs: 600_000 }

async function upstreamCall(req: Request): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: await req.text(),
    signal: req.signal,
  })
}

const handlers: Record<string, (req: Request) => Promise<Response>> = {
  async json(req) {
    const res = await upstreamCall(req)
    return new Response(await res.text(), { headers: { 'content-type': 'application/json' } })
  },
  async native(req) {
    const res = await upstreamCall(req)
    return new Response(res.body, { headers: SSE })
  },
  async js(req) {
    const reader = (await upstreamCall(req)).body!.getReader()
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(c) {
          const r = await reader.read()
          if (r.done) c.close()
          else c.enqueue(r.value)
        },
        cancel: (why) => reader.cancel(why),
      },
      { highWaterMark: 0 },
    )
    return new Response(body, { headers: SSE })
  },
  /** The stream read by a reader to its end, answered as one body: the reader's cost alone. */
  async 'read-whole'(req) {
    const reader = (await upstreamCall(req)).body!.getReader()
    const parts: Uint8Array[] = []
    for (;;) {
      const r = await reader.read()
      if (r.done) break
      parts.push(r.value)
    }
    return new Response(Buffer.concat(parts), { headers: SSE })
  },
  /** The upstream read natively to its end, answered by a JS pull stream of that one chunk: the response stream's cost alone. */
  async 'js-out'(req) {
    const bytes = await (await upstreamCall(req)).bytes()
    let sent = false
    const body = new ReadableStream<Uint8Array>(
      {
        pull(c) {
          if (sent) c.close()
          else c.enqueue(bytes)
          sent = true
        },
      },
      { highWaterMark: 0 },
    )
    return new Response(body, { headers: SSE })
  },
  async direct(req) {
    const reader = (await upstreamCall(req)).body!.getReader()
    const body = new ReadableStream<Uint8Array>({
      type: 'direct',
      async pull(c: DirectSink) {
        for (;;) {
          const r = await reader.read()
          if (r.done) break
          c.write(r.value)
          c.flush()
        }
        c.close()
      },
      cancel: (why: unknown) => reader.cancel(why),
    } as never)
    return new Response(body, { headers: SSE })
  },
  /** `js` with the first read taken before the response (the writer's hold). */
  async 'js-hold'(req) {
    const reader = (await upstreamCall(req)).body!.getReader()
    let first: Awaited<ReturnType<typeof reader.read>> | null = await reader.read()
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(c) {
          const r = first ?? (await reader.read())
          first = null
          if (r.done) c.close()
          else c.enqueue(r.value)
        },
        cancel: (why) => reader.cancel(why),
      },
      { highWaterMark: 0 },
    )
    return new Response(body, { headers: SSE })
  },
  /** `js-hold` with 100 µs of work after the first enqueue, in the same turn (the end's bookkeeping). */
  async 'js-hold-busy'(req) {
    const reader = (await upstreamCall(req)).body!.getReader()
    const first = await reader.read()
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(c) {
          if (!first.done) c.enqueue(first.value)
          for (;;) {
            const r = await reader.read()
            if (r.done) break
            c.enqueue(r.value)
          }
          const t = performance.now()
          while (performance.now() - t < 0.1) {}
          c.close()
        },
        cancel: (why) => reader.cancel(why),
      },
      { highWaterMark: 0 },
    )
    return new Response(body, { headers: SSE })
  },
  /** `direct` with the first read taken before the response (the writer's hold). */
  async 'direct-hold'(req) {
    const reader = (await upstreamCall(req)).body!.getReader()
    const first = await reader.read()
    const body = new ReadableStream<Uint8Array>({
      type: 'direct',
      async pull(c: DirectSink) {
        let r = first
        while (!r.done) {
          c.write(r.value)
          c.flush()
          r = await reader.read()
        }
        c.close()
      },
      cancel: (why: unknown) => reader.cancel(why),
    } as never)
    return new Response(body, { headers: SSE })
  },
  writer: (req) => viaWriter(req, false),
  'writer-pass': (req) => viaWriter(req, true),
}

async function viaWriter(req: Request, pass: boolean): Promise<Response> {
  {
    const deadline = new Deadline(realScheduler)
    const ctx = { provider, model: {}, signal: req.signal, requestId: 'r', timeouts, deadline }
    const res = await upstreamCall(req)
    const encoder = pass ? passThrough() : new ChatBytes('mock/bench', true, 32 << 20, 'mock')
    const out = await writeStream({ body: res.body!, stages: [encoder.stage], ctx }, encoder, {
      startedAt: deadline.startedAt,
      keepaliveMs: 15_000,
      holdMs: 10_000,
      signal: req.signal,
      holdForContent: true,
      firstToken: { ms: 30_000, failOver: false },
      // FINISH_US: the end's bookkeeping, simulated (the gateway's usage record, access line, metrics).
      onFinish: () => {
        const t = performance.now()
        while ((performance.now() - t) * 1000 < FINISH_US) {}
      },
    })
    if (out.status === 'error') return new Response(String(out.error), { status: 502 })
    return new Response(out.body, { status: 200, headers: SSE })
  }
}

/** The relay left out: bytes as they came, every read content. */
function passThrough() {
  let n = 0
  const stage = {
    transform(chunk: Uint8Array, c: TransformStreamDefaultController<Uint8Array>) {
      n += chunk.byteLength
      c.enqueue(chunk)
    },
  }
  return {
    stage,
    keepalive: new Uint8Array(0),
    encode: (b: Uint8Array) => b,
    end: () => null,
    error: () => new Uint8Array(0),
    usage: () => null,
    failure: () => null,
    relayedBytes: () => n,
  }
}

const handle = handlers[variant]
if (!handle) throw new Error(`unknown variant ${variant}`)
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: handle })
console.log(JSON.stringify({ port: server.port, pid: process.pid }))
