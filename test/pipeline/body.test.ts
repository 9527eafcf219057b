import { describe, expect, test } from 'bun:test'
import { jsonLimitError } from '../../src/json/parse-json-body.ts'
import { readBodyText } from '../../src/pipeline/body.ts'

const LIMIT = 1024 * 1024

/** The same body over a real socket, once with Content-Length and once chunked (no length). */
async function readBoth(
  text: string,
  limit = LIMIT,
): Promise<Array<string | { status: number; code: string; message: string }>> {
  using server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      try {
        return Response.json({ text: await readBodyText(req, limit, 60_000) })
      } catch (e) {
        const err = e as { status: number; code: string; message: string }
        return Response.json({ error: { status: err.status, code: err.code, message: err.message } })
      }
    },
  })
  const bytes = new TextEncoder().encode(text)
  const declared = fetch(server.url, { method: 'POST', body: bytes })
  const chunked = fetch(server.url, {
    method: 'POST',
    body: new ReadableStream({
      start(c) {
        for (let i = 0; i < bytes.length; i += 1000) c.enqueue(bytes.subarray(i, i + 1000))
        c.close()
      },
    }),
  })
  return await Promise.all(
    [declared, chunked].map(async (r) => {
      const res = (await (await r).json()) as {
        text?: string
        error?: { status: number; code: string; message: string }
      }
      return res.text ?? res.error!
    }),
  )
}

describe('readBodyText: a declared small body (read whole) and a chunked one (read in pieces) agree', () => {
  test('a valid body, multibyte text included, is the same text', async () => {
    const text = JSON.stringify({
      model: 'a/b',
      messages: [{ role: 'user', content: 'héllo 👋 '.repeat(500) }],
    })
    expect(await readBoth(text)).toEqual([text, text])
  })

  test('a body nested too deep → the 400 the parser would give, whichever way it was read', async () => {
    const deep = `{"a":${'['.repeat(150)}${']'.repeat(150)}}`
    const expected = jsonLimitError(deep)!
    const [declared, chunked] = await readBoth(deep)
    expect(declared).toEqual({ status: 400, code: 'invalid_value', message: expected.message })
    expect(chunked).toEqual(declared)
  })

  test('a large body: the scan goes on past its first MB — a string across that point, a limit after it', async () => {
    // Brackets inside a string that starts before the first MB and ends after it are not
    // structure; nesting too deep after it is refused all the same. Multibyte text on both sides.
    const inside = `é${'['.repeat(600_000)}👋${'['.repeat(600_000)}`
    const valid = `{"model":"a/b","s":"${inside}","t":[1]}`
    const deep = `{"s":"${inside}","a":${'['.repeat(150)}${']'.repeat(150)}}`
    const [declared, chunked] = await readBoth(valid, 8 * LIMIT)
    expect(declared === valid && chunked === valid).toBe(true)
    const refused = await readBoth(deep, 8 * LIMIT)
    expect(refused).toEqual([
      { status: 400, code: 'invalid_value', message: jsonLimitError(deep)!.message },
      { status: 400, code: 'invalid_value', message: jsonLimitError(deep)!.message },
    ])
  })

  test('10 MB of `[` or of `{"a":` is refused from its first pieces, before the rest has arrived', async () => {
    // Issue 9: the head is scanned (as bytes) while it arrives. The body's first 2 MB are sent
    // and the stream is left open: only the early scan can answer; without it the read waits
    // for the rest and ends in the 408.
    using server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        try {
          return Response.json({ text: await readBodyText(req, 16 * LIMIT, 3000) })
        } catch (e) {
          const err = e as { status: number; code: string }
          return Response.json({ status: err.status, code: err.code })
        }
      },
    })
    for (const unit of ['[', '{"a":']) {
      const head = new TextEncoder().encode(unit.repeat(Math.ceil((2 * LIMIT) / unit.length)))
      const res = await fetch(server.url, {
        method: 'POST',
        body: new ReadableStream<Uint8Array>({
          start(c) {
            for (let i = 0; i < head.length; i += 64 * 1024) c.enqueue(head.subarray(i, i + 64 * 1024))
          },
        }),
      })
      expect(await res.json()).toEqual({ status: 400, code: 'invalid_value' })
    }
  })

  test('more than the limit → 413, declared or counted', async () => {
    const [declared, chunked] = await readBoth(`"${'x'.repeat(5000)}"`, 4000)
    expect(declared).toMatchObject({ status: 413, code: 'request_too_large' })
    expect(chunked).toMatchObject({ status: 413, code: 'request_too_large' })
  })
})

describe('readBodyText: a content coding other than identity', () => {
  const body = '{"model": "a/b"}'
  const read = (encoding: string | null, bytes: string | Uint8Array = body) =>
    readBodyText(
      new Request('http://localhost/', {
        method: 'POST',
        headers: encoding === null ? {} : { 'content-encoding': encoding },
        body: bytes,
      }),
      LIMIT,
      60_000,
    ).catch((e: unknown) => e as { status: number; code: string; message: string; headers?: unknown })

  test('415 naming it (gzip, br, a list), before any byte is read as JSON', async () => {
    for (const [encoding, bytes, named] of [
      ['gzip', Bun.gzipSync(body), 'gzip'],
      ['br', body, 'br'],
      ['identity, gzip', Bun.gzipSync(body), 'gzip'],
      ['x-custom', body, 'x-custom'],
    ] as const) {
      expect(await read(encoding, bytes)).toMatchObject({
        status: 415,
        code: 'unsupported_content_encoding',
        message: expect.stringContaining(`'${named}'`),
        headers: { 'accept-encoding': 'identity' },
      })
    }
  })

  test('identity (any case) or none: read as before', async () => {
    for (const encoding of [null, 'identity', 'IDENTITY', '']) expect(await read(encoding)).toBe(body)
  })
})
