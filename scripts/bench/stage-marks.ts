/**
 * @module
 * A preload (`bun --preload scripts/bench/stage-marks.ts src/main.ts serve ...`, `$STAGE_MARKS_OUT`
 * set) that stamps the stages of each request on the gateway's loop, for the c=1 per-stage timeline
 * (c1-stages.ts): the request handed to the server's fetch (`in`; `in on another connection` when
 * its socket is not the last request's), its response handed back (`out`) and the loop's next turn
 * after that (`out, the turn after`: an immediate set then, itself uncounted — how long the loop
 * stayed busy); the admission asked (`admit`), its transaction (`tx` … `tx-end`) and its promise
 * settled (`admitted`); the upstream fetch called (`fetch`) and its headers (`headers`); each body
 * read asked (`read-call`) and resolved (`read`), a `text()` resolved (`text`); the outcome handed
 * to the usage flush (`record`); the access line and metrics (`Traffic.end`: `end` … `end-done`,
 * in Elysia's `afterResponse` for a JSON answer). And the turns a request takes: each
 * `setImmediate` set (`imm`) and run (`imm-run`), `setTimeout` set (`tmo`), `queueMicrotask`
 * (`mt`), a message posted to a worker (`post`). Marks are [epoch ms, label] (performance.timeOrigin + now(), as c1-client.ts
 * stamps its requests), written as JSON at exit. Lighter than loop-trace.ts (no call sites, no
 * statement wrapping): a few hundred ns a mark. A measuring tool only — nothing in `src/` knows of it.
 */
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { isMainThread } from 'node:worker_threads'

const OUT = process.env.STAGE_MARKS_OUT
const CAP = 4_000_000
const marks: [number, string][] = []
const now = () => performance.timeOrigin + performance.now()
const mark = (label: string) => {
  if (marks.length < CAP) marks.push([now(), label])
}

if (OUT && isMainThread) {
  // The checkout served: src/main.ts is the entry (argv[1]); its modules are the ones patched.
  const src = dirname(process.argv[1]!)
  const { SqliteLimiter } = await import(join(src, 'store/sqlite/admissions.ts'))
  const { LimiterQueries } = await import(join(src, 'store/sqlite/limiter.ts'))
  const { UsageRecorder } = await import(join(src, 'usage/recorder.ts'))

  const lim = SqliteLimiter.prototype as { admit: (i: unknown) => Promise<unknown> }
  const admit = lim.admit
  lim.admit = function (this: unknown, input: unknown) {
    mark('admit')
    const p = admit.call(this, input)
    p.then(
      () => mark('admitted'),
      () => mark('admitted'),
    )
    return p
  }
  const q = LimiterQueries.prototype as { admitMany: (i: unknown[]) => unknown }
  const many = q.admitMany
  q.admitMany = function (this: unknown, inputs: unknown[]) {
    mark(`tx ${inputs.length}`)
    try {
      return many.call(this, inputs)
    } finally {
      mark('tx-end')
    }
  }
  const { Traffic } = await import(join(src, 'traffic/traffic.ts'))
  const tr = Traffic.prototype as { end: (...a: unknown[]) => void }
  const end = tr.end
  tr.end = function (this: unknown, ...a: unknown[]) {
    mark('end')
    end.apply(this, a)
    mark('end-done')
  }
  const rec = UsageRecorder.prototype as { record: (c: unknown) => void }
  const record = rec.record
  rec.record = function (this: unknown, c: unknown) {
    mark('record')
    return record.call(this, c)
  }

  // The response handed back, and the next turn of the loop after it (the loop busy until then).
  const nextTurn = setImmediate
  const out = () => {
    mark('out')
    nextTurn(() => mark('out, the turn after'))
  }
  const serve = Bun.serve
  let lastPort = -1
  ;(Bun as { serve: unknown }).serve = (opts: Parameters<typeof Bun.serve>[0]) => {
    const o = opts as { fetch: (r: Request, s: unknown) => unknown }
    const fetch = o.fetch
    return serve.call(Bun, {
      ...opts,
      fetch(this: unknown, r: Request, s: { requestIP(r: Request): { port: number } | null }) {
        mark('in')
        // A client's request on a connection other than the last request's.
        const port = s.requestIP(r)?.port ?? 0
        if (port !== lastPort) mark('in on another connection')
        lastPort = port
        const res = fetch.call(this, r, s)
        if (res instanceof Promise) res.then(out, out)
        else out()
        return res
      },
    } as never)
  }

  const origFetch = globalThis.fetch
  globalThis.fetch = Object.assign(async (...a: Parameters<typeof fetch>) => {
    mark('fetch')
    try {
      return await origFetch(...a)
    } finally {
      mark('headers')
    }
  }, origFetch)

  const rproto = ReadableStreamDefaultReader.prototype as { read: () => Promise<unknown> }
  const read = rproto.read
  rproto.read = function (this: unknown) {
    mark('read-call')
    const p = read.call(this)
    p.then(
      () => mark('read'),
      () => {},
    )
    return p
  }
  const resp = Response.prototype as { text: () => Promise<string> }
  const text = resp.text
  resp.text = function (this: unknown) {
    const p = text.call(this)
    p.then(
      () => mark('text'),
      () => {},
    )
    return p
  }

  const g = globalThis as unknown as Record<string, (...a: unknown[]) => unknown>
  const imm = g.setImmediate!
  g.setImmediate = (fn: unknown, ...rest: unknown[]) => {
    mark('imm')
    return imm(
      (...b: unknown[]) => {
        mark('imm-run')
        return (fn as (...x: unknown[]) => unknown)(...b)
      },
      ...rest,
    )
  }
  const tmo = g.setTimeout!
  g.setTimeout = (fn: unknown, ...rest: unknown[]) => {
    mark('tmo')
    return tmo(fn, ...rest)
  }
  const mt = g.queueMicrotask!
  g.queueMicrotask = (fn: unknown) => {
    mark('mt')
    return mt(fn)
  }
  const wproto = Worker.prototype as unknown as { postMessage: (m: unknown, ...r: unknown[]) => void }
  const post = wproto.postMessage
  wproto.postMessage = function (this: unknown, m: unknown, ...r: unknown[]) {
    mark('post')
    return post.call(this, m, ...r)
  }

  process.on('exit', () => writeFileSync(OUT, JSON.stringify(marks)))
}
