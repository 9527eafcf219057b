/**
 * @module
 * A pass-through's upstream body as `fetch` takes it. A string goes as it is (Bun sends a flat
 * ASCII string without copying it). A spliced text (`json/spliced.ts`: a large body, the client's
 * text with a few fields edited) is written piece by piece into the request, a slice of at most
 * `SLICE` characters at a time, under a `content-length` counted beforehand: joined it would be a
 * copy as large as the body, held until the next collection (measured: a 100 MB spliced body sent
 * so raised the sender's peak RSS by 8 MB, joined by 100 MB; as a `Uint8Array`, Bun copies it
 * again). With the length declared the upstream gets an ordinary body, not a chunked one.
 *
 * @example
 * const headers = new Headers({ 'content-type': 'application/json' })
 * fetch(url, { method: 'POST', headers, body: requestBody(call.body, headers) })
 */
import { type JsonText, SplicedText } from '../json/spliced.ts'

/** Characters written at once: the memory a spliced body costs while it is sent (its UTF-8 bytes, buffered). */
const SLICE = 256 * 1024

/** `body` for `fetch`; for a spliced one, `headers` gets its `content-length`. */
export function requestBody(body: JsonText, headers: Headers): string | ReadableStream<Uint8Array> {
  if (!(body instanceof SplicedText)) return body
  headers.set('content-length', String(body.byteLength()))
  const { parts } = body
  // Bun's direct stream: each write goes straight to the request's buffer, flushed before the next.
  return new ReadableStream<Uint8Array>({
    type: 'direct',
    async pull(sink) {
      try {
        for (const part of parts) {
          for (let at = 0; at < part.length; ) {
            // Never between the two halves of a surrogate pair (each would be sent as U+FFFD).
            let end = Math.min(part.length, at + SLICE)
            if (end < part.length && isHighSurrogate(part.charCodeAt(end - 1))) end--
            // A slice of a view is a view: no characters are copied before the write encodes them.
            sink.write(at === 0 && end === part.length ? part : part.slice(at, end))
            await sink.flush()
            at = end
          }
        }
        sink.close()
      } catch {
        // The request was aborted or the upstream went away: the fetch reports it, not its body.
      }
    },
  })
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff
}
