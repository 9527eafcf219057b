/**
 * Framing an event stream into whole events (providers/sse/event-frames.ts) whatever the reads: an
 * event split over many reads, a blank line across a read's seam, CRLF line ends, and a large event
 * read in small pieces (held as pieces and joined once, not joined again on every read).
 */
import { expect, test } from 'bun:test'
import { eventFrames } from '../../../src/providers/sse/event-frames.ts'

async function frames(reads: string[], batch = false): Promise<string[]> {
  const source = new ReadableStream<Uint8Array>({
    start(c) {
      for (const r of reads) c.enqueue(new TextEncoder().encode(r))
      c.close()
    },
  })
  const out: string[] = []
  for await (const f of source.pipeThrough(new TransformStream(eventFrames(1 << 24, 'up', batch))))
    out.push(new TextDecoder().decode(f))
  return out
}

test('events split anywhere come out whole, one a frame', async () => {
  const text = 'event: a\ndata: {"x":1}\n\nevent: b\ndata: {"y":2}\n\ndata: [DONE]\n\n'
  const whole = ['event: a\ndata: {"x":1}\n\n', 'event: b\ndata: {"y":2}\n\n', 'data: [DONE]\n\n']
  for (let size = 1; size <= text.length; size++) {
    const reads: string[] = []
    for (let i = 0; i < text.length; i += size) reads.push(text.slice(i, i + size))
    expect(await frames(reads)).toEqual(whole)
  }
})

test('a blank line across the seam of two reads ends the event; CRLF reads as LF', async () => {
  expect(await frames(['data: 1\n', '\ndata: 2\r\n', '\r\n'])).toEqual(['data: 1\n\n', 'data: 2\n\n'])
})

test('a 2 MB event read 16 KB at a time is one frame, byte for byte; an unfinished last one goes on as it came', async () => {
  const big = `data: ${'x'.repeat(2 * 1024 * 1024)}\n\n`
  const reads: string[] = []
  for (let i = 0; i < big.length; i += 16 * 1024) reads.push(big.slice(i, i + 16 * 1024))
  const out = await frames([...reads, 'data: tail'])
  expect(out.length).toBe(2)
  expect(out[0]).toBe(big)
  expect(out[1]).toBe('data: tail')
})

test('batch: each read’s complete events as one frame', async () => {
  expect(await frames(['data: 1\n\ndata: 2\n\ndata: 3', '\n\n'], true)).toEqual([
    'data: 1\n\ndata: 2\n\n',
    'data: 3\n\n',
  ])
})

test('an event past the bound is refused, however it was read', async () => {
  const source = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 8; i++) c.enqueue(new TextEncoder().encode('x'.repeat(100)))
      c.close()
    },
  })
  const reader = source.pipeThrough(new TransformStream(eventFrames(500, 'up'))).getReader()
  await expect(reader.read()).rejects.toThrow()
})
