import { describe, expect, test } from 'bun:test'
import { encodeSSE, parseSSE, type SSEEvent } from '../../../src/providers/sse/index.ts'
import { bytes, drain } from '../helpers.ts'

async function parse(...pieces: Array<string | Uint8Array>): Promise<SSEEvent[]> {
  const { items, error } = await drain(parseSSE(bytes(...pieces)))
  expect(error).toBeUndefined()
  return items
}

/** Every way to cut `text` into pieces of `size` bytes (UTF-8), to prove boundaries do not matter. */
function cutBytes(text: string, size: number): Uint8Array[] {
  const all = new TextEncoder().encode(text)
  const out: Uint8Array[] = []
  for (let at = 0; at < all.length; at += size) out.push(all.slice(at, at + size))
  return out
}

describe('parseSSE', () => {
  test('plain events with LF, the event field and the default type', async () => {
    expect(await parse('data: one\n\nevent: ping\ndata: two\n\n')).toEqual([
      { data: 'one' },
      { event: 'ping', data: 'two' },
    ])
  })

  test('CRLF and lone CR line ends give the same events as LF', async () => {
    const expected = [{ data: 'a' }, { event: 'e', data: 'b' }]
    expect(await parse('data: a\r\n\r\nevent: e\r\ndata: b\r\n\r\n')).toEqual(expected)
    expect(await parse('data: a\r\revent: e\rdata: b\r\r')).toEqual(expected)
  })

  test('a CRLF split between two chunks is one line end, not two', async () => {
    // Were the LF taken as a second line end, the empty line would dispatch "a" early and lose "b".
    expect(await parse('data: a\r', '\ndata: b\r', '\n\r', '\n')).toEqual([{ data: 'a\nb' }])
  })

  test('multi-line data is joined with LF; a trailing empty data line keeps its LF', async () => {
    expect(await parse('data: line 1\ndata: line 2\ndata:line 3\n\n')).toEqual([
      { data: 'line 1\nline 2\nline 3' },
    ])
    expect(await parse('data: x\ndata:\n\n')).toEqual([{ data: 'x\n' }])
  })

  test('comments, unknown fields and retry are ignored; only one leading space is stripped', async () => {
    const events = await parse(': keep-alive\n\n:another\nfoo: bar\nretry: 10\ndata:  two spaces\n\n')
    expect(events).toEqual([{ data: ' two spaces' }])
  })

  test('an event without data is not dispatched, and its type does not leak into the next', async () => {
    expect(await parse('event: lonely\n\ndata: x\n\n')).toEqual([{ data: 'x' }])
  })

  test('a field line without a colon is a field with an empty value', async () => {
    expect(await parse('data\n\n')).toEqual([{ data: '' }])
  })

  test('ids persist across events until changed, and an id with NUL is ignored', async () => {
    expect(await parse('id: 7\ndata: a\n\ndata: b\n\nid: 8\u0000\ndata: c\n\nid\ndata: d\n\n')).toEqual([
      { data: 'a', id: '7' },
      { data: 'b', id: '7' },
      { data: 'c', id: '7' },
      { data: 'd' },
    ])
  })

  test('an unfinished event at the end of the body is discarded', async () => {
    expect(await parse('data: complete\n\ndata: cut off')).toEqual([{ data: 'complete' }])
    expect(await parse('data: complete\n\ndata: no blank line\n')).toEqual([{ data: 'complete' }])
  })

  test('a leading BOM is ignored', async () => {
    expect(await parse('\uFEFFdata: x\n\n')).toEqual([{ data: 'x' }])
  })

  test('events split at every byte boundary, inside multibyte UTF-8 too, parse the same', async () => {
    const text = 'event: δ\r\ndata: {"t":"héllo 👋 世界"}\r\ndata: 2nd\r\n\r\n: c\ndata: ok\n\n'
    const expected = [{ event: 'δ', data: '{"t":"héllo 👋 世界"}\n2nd' }, { data: 'ok' }]
    for (let size = 1; size <= 7; size++) expect(await parse(...cutBytes(text, size))).toEqual(expected)
  })

  test('cancelling the parsed stream cancels the body', async () => {
    let cancelled: unknown = 'not cancelled'
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(new TextEncoder().encode('data: x\n\n'))
      },
      cancel(reason) {
        cancelled = reason
      },
    })
    const reader = parseSSE(body).getReader()
    expect((await reader.read()).value).toEqual({ data: 'x' })
    await reader.cancel('bye')
    // pipeThrough relays the cancel to its source asynchronously.
    for (let i = 0; i < 50 && cancelled === 'not cancelled'; i++) await Bun.sleep(1)
    expect(cancelled).toBe('bye')
  })

  test('an error of the body errors the parsed stream', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('data: x\n\n'))
        c.error(new Error('reset'))
      },
    })
    const { items, error } = await drain(parseSSE(body))
    expect((error as Error).message).toBe('reset')
    expect(items.length).toBeLessThanOrEqual(1)
  })
})

describe('encodeSSE', () => {
  test('frames data, one data line per line, with an optional event', () => {
    expect(encodeSSE('{"a":1}')).toBe('data: {"a":1}\n\n')
    expect(encodeSSE('a\nb\r\nc\rd', 'message')).toBe(
      'event: message\ndata: a\ndata: b\ndata: c\ndata: d\n\n',
    )
  })

  test('refuses CR or LF in the event name', () => {
    expect(() => encodeSSE('x', 'evil\ndata: injected')).toThrow(TypeError)
    expect(() => encodeSSE('x', 'evil\r')).toThrow(TypeError)
  })

  test('round-trips through parseSSE', async () => {
    const text = encodeSSE('multi\nline', 'e') + encodeSSE('{"x":"y"}')
    expect(await parse(text)).toEqual([{ event: 'e', data: 'multi\nline' }, { data: '{"x":"y"}' }])
  })
})

describe('parseSSE is linear and bounded (issue 9, finding 3)', () => {
  /** A deterministic mixed stream: several events, CRLF and CR line ends, comments, multibyte text. */
  function mixedStream(): string {
    let text = ''
    for (let i = 0; i < 200; i++) {
      const end = ['\n', '\r\n', '\r'][i % 3]!
      text += `: ping ${i}${end}id: ${i}${end}event: e${i % 4}${end}`
      text += `data: {"i":${i},"t":"${'héllo 👋 '.repeat(i % 7)}${'x'.repeat((i * 37) % 500)}"}${end}`
      if (i % 5 === 0) text += `data: second line ${i}${end}`
      text += end
    }
    return text
  }

  test('bytes fed in small, uneven chunks produce the same events as the whole body', async () => {
    const text = mixedStream()
    const whole = await parse(text)
    expect(whole).toHaveLength(200)
    const all = new TextEncoder().encode(text)
    let seed = 7
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
      return seed
    }
    for (const maxSize of [1, 3, 17, 256, 4096]) {
      const pieces: Uint8Array[] = []
      for (let at = 0; at < all.length; ) {
        const size = 1 + (next() % maxSize)
        pieces.push(all.slice(at, at + size))
        at += size
      }
      expect(await parse(...pieces)).toEqual(whole)
    }
  })

  /** Milliseconds to parse one `size`-character data line sent in 1 KiB chunks (best of three). */
  async function lineCost(size: number): Promise<number> {
    const chunk = new Uint8Array(1024).fill(0x78)
    let best = Number.POSITIVE_INFINITY
    for (let run = 0; run < 3; run++) {
      let sent = -1
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent < 0) {
            c.enqueue(new TextEncoder().encode('data: '))
            sent = 0
          } else if (sent >= size) {
            c.enqueue(new TextEncoder().encode('\n\n'))
            c.close()
          } else {
            c.enqueue(chunk)
            sent += chunk.length
          }
        },
      })
      const started = performance.now()
      const { items } = await drain(parseSSE(body))
      best = Math.min(best, performance.now() - started)
      expect(items[0]!.data.length).toBe(size)
    }
    return best
  }

  test('one long line in 1 KiB chunks costs linear time: 16× the bytes, far less than 256×', async () => {
    const small = await lineCost(1024 * 1024)
    const large = await lineCost(16 * 1024 * 1024)
    // A parser that rescans the pending line is quadratic (256×); linear is 16× plus noise.
    expect(large / Math.max(small, 1)).toBeLessThan(100)
  })

  const limits = { maxEventBytes: 1000, label: 'up' }

  async function parseLimited(...pieces: string[]) {
    let cancelled: unknown
    let i = 0
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        const piece = pieces[i++]
        if (piece === undefined) c.close()
        else c.enqueue(new TextEncoder().encode(piece))
      },
      cancel(reason) {
        cancelled = reason
      },
    })
    const out = await drain(parseSSE(body, limits))
    for (let n = 0; n < 50 && out.error && cancelled === undefined; n++) await Bun.sleep(1)
    return { ...out, cancelled, read: i }
  }

  test('an event at the cap passes; one character more → 502 upstream_response_too_large', async () => {
    const ok = await parseLimited(`data: ${'x'.repeat(1000)}\n\n`)
    expect(ok.error).toBeUndefined()
    const tooBig = await parseLimited(`data: ${'x'.repeat(1001)}\n\n`)
    expect(tooBig.error).toMatchObject({ status: 502, code: 'upstream_response_too_large' })
    expect((tooBig.error as Error).message).toContain("Upstream 'up'")
  })

  test('a line without an end trips the cap as it arrives, and the body is cancelled unread', async () => {
    const pieces = Array.from({ length: 1000 }, () => 'x'.repeat(100))
    const r = await parseLimited('data: ', ...pieces)
    expect(r.error).toMatchObject({ code: 'upstream_response_too_large' })
    expect(r.cancelled).toBe(r.error)
    expect(r.read).toBeLessThan(20)
  })

  test('many data lines count together; comments and dispatched events do not', async () => {
    const many = await parseLimited(...Array.from({ length: 30 }, () => `data: ${'y'.repeat(40)}\n`))
    expect(many.error).toMatchObject({ code: 'upstream_response_too_large' })
    const separate = Array.from({ length: 30 }, () => `: ${'c'.repeat(900)}\ndata: ${'z'.repeat(900)}\n\n`)
    const fine = await parseLimited(...separate)
    expect(fine.error).toBeUndefined()
    expect(fine.items).toHaveLength(30)
  })
})
