/**
 * @module
 * A whole answer's events (completion-events.ts, anthropic/message-events.ts,
 * surfaces/responses/response-events.ts) as a byte stream made as it is read: each pull encodes the
 * next events, up to about `BATCH` bytes, so what is held at once is the answer and one batch, not
 * every event joined (DESIGN §16: a whole answer costs about its size, read as a stream too).
 *
 * @example
 * return eventStream(events(json)) // events: a generator of `event: …\ndata: …\n\n` strings
 */

/** Characters of events encoded a pull: a socket write's worth. */
const BATCH = 64 * 1024

export function eventStream(events: Iterator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    pull(controller) {
      let batch = ''
      for (;;) {
        const next = events.next()
        if (next.done) {
          if (batch) controller.enqueue(encoder.encode(batch))
          controller.close()
          return
        }
        batch += next.value
        if (batch.length >= BATCH) break
      }
      controller.enqueue(encoder.encode(batch))
    },
    cancel() {
      events.return?.()
    },
  })
}
