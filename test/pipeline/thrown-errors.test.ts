/**
 * What a value thrown around an upstream call becomes (pipeline/errors.ts): the network's errors
 * as Bun's fetch and body readers really throw them (a TypeError with a `code`) and aborts stay
 * the upstream's failures; anything else is the gateway's own fault, classified `internal`.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { failureFacts } from '../../src/pipeline/attempts.ts'
import { toGatewayError } from '../../src/pipeline/errors.ts'
import { streamReadError } from '../../src/providers/http.ts'
import { classify } from '../../src/providers/resilience/failure-kinds.ts'
import type { CallContext } from '../../src/providers/types.ts'
import { StoreBusyError } from '../../src/store/errors.ts'

let reset: { port: number; stop(closeActive?: boolean): void }
let gzip: { port: number; stop(closeActive?: boolean): void }
beforeAll(() => {
  // Says gzip and sends none: the body reader's decompression fails.
  gzip = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(s) {
        s.write('HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: 12\r\n\r\nnot gzipped!')
        s.end()
      },
    },
  })
  // Answers a stream's head and one chunk, then closes the socket mid-body.
  reset = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(s) {
        s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n')
        setTimeout(() => s.end(), 20)
      },
    },
  })
})
afterAll(() => {
  reset.stop(true)
  gzip.stop(true)
})

const thrown = async (f: () => Promise<unknown>): Promise<unknown> => {
  try {
    await f()
  } catch (e) {
    return e
  }
  throw new Error('nothing thrown')
}
const kindOf = (e: unknown) => {
  const err = toGatewayError(e, 'upstream')
  return [err.status, err.code, classify(failureFacts(err))]
}

test("fetch's and the body reader's own errors stay the upstream's (transient), an abort the client's", async () => {
  const refused = await thrown(() => fetch('http://127.0.0.1:1/'))
  expect(kindOf(refused)).toEqual([502, 'upstream_error', 'transient'])
  const cut = await thrown(async () => {
    const res = await fetch(`http://127.0.0.1:${reset.port}/`)
    await res.text()
  })
  expect(kindOf(cut)).toEqual([502, 'upstream_error', 'transient'])
  const undecodable = await thrown(async () => {
    const reader = (await fetch(`http://127.0.0.1:${gzip.port}/`)).body!.getReader()
    while (!(await reader.read()).done) {}
  })
  expect(kindOf(undecodable)).toEqual([502, 'upstream_error', 'transient'])
  // The stream reader's own mapping (providers/http.ts) keeps them the upstream's too.
  const ctx = { signal: new AbortController().signal, provider: { prefix: 'p' } } as unknown as CallContext
  expect(streamReadError(cut, ctx).code).toBe('upstream_stream_interrupted')
  expect(streamReadError(undecodable, ctx).code).toBe('upstream_stream_interrupted')
  expect(classify(failureFacts(streamReadError(new TypeError('x'), ctx)))).toBe('internal')
  const ac = new AbortController()
  ac.abort()
  const aborted = await thrown(() => fetch(`http://127.0.0.1:${reset.port}/`, { signal: ac.signal }))
  expect(toGatewayError(aborted, 'upstream').code).toBe('client_closed_request')
  // A timeout signal's reason, as before: the upstream's failure.
  expect(kindOf(new DOMException('The operation timed out.', 'TimeoutError'))).toEqual([
    502,
    'upstream_error',
    'transient',
  ])
})

test("the gateway's own exceptions are internal: 500 internal_error, the stack kept for the log", () => {
  const bug = (() => {
    try {
      ;(null as unknown as { type: string }).type
    } catch (e) {
      return e
    }
  })()
  const err = toGatewayError(bug, 'upstream')
  expect([err.status, err.code, err.type, classify(failureFacts(err))]).toEqual([
    500,
    'internal_error',
    'api_error',
    'internal',
  ])
  expect(err.detail).toContain('thrown-errors.test.ts')
  expect(err.message).not.toContain('null')
  expect(classify(failureFacts(toGatewayError(new RangeError('x'), 'upstream')))).toBe('internal')
  // A store that cannot answer is the gateway's side too, with its own 503.
  const busy = toGatewayError(new StoreBusyError(5000), 'upstream')
  expect([busy.status, busy.code, classify(failureFacts(busy))]).toEqual([503, 'store_busy', 'internal'])
})

test("a thrown value that is not an Error is the gateway's own too: internal, in an attempt and in a stream", () => {
  // Only Bun's network errors (Error objects with a string code) and DOMExceptions came from the
  // wire; a string, an object (even one with a string `code`), undefined came from code of ours.
  for (const value of ['a string', { code: 'ECONNRESET' }, { message: 'x' }, undefined, null, 42]) {
    for (const where of ['upstream', 'stream'] as const) {
      const err = toGatewayError(value, where)
      expect([where, err.status, err.code, classify(failureFacts(err))]).toEqual([
        where,
        500,
        'internal_error',
        'internal',
      ])
    }
  }
  const ctx = { signal: new AbortController().signal, provider: { prefix: 'p' } } as unknown as CallContext
  expect(classify(failureFacts(streamReadError({ code: 'ECONNRESET' }, ctx)))).toBe('internal')
  expect(toGatewayError('a string', 'upstream').detail).toBe('a string')
})
