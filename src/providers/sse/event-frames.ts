/**
 * @module
 * An SSE body cut into its events, each one still its own bytes (`data:` lines, blank line and
 * all): a stream stage for a byte relay whose events must be looked at one by one — the cut at
 * the output allowance on a pass-through (DESIGN §11) counts each event's text before it is
 * relayed. The bytes are not re-encoded: an event goes out as it came, a subarray of the chunk
 * it arrived in (or of the joined chunks it spanned). CR and CRLF line ends (legal SSE, rare) are
 * rewritten as LF, as the byte relays re-frame them anyway.
 *
 * @example
 * const plan = { body, stages: [eventFrames(maxResponseBytes(provider), provider.prefix)], ctx }
 */

import { responseTooLarge } from '../body-limit.ts'

const LF = 10
const CR = 13
const BLANK = Buffer.from('\n\n')

/**
 * A transformer: body chunks in, one Uint8Array per complete event out (at most `maxEventBytes`
 * each) — or, `batch`, one Uint8Array per chunk holding the complete events it ended (the
 * unfinished one after them waits for the next chunk), for a gate that walks a read's events
 * itself and a relay that frames them anyway (each event's size is then the relay's to check).
 */
export function eventFrames(
  maxEventBytes: number,
  label: string,
  batch = false,
): Transformer<Uint8Array, Uint8Array> {
  /**
   * The unfinished event's bytes, as read (joined once, when a read ends it: joining on every read
   * copied a multi-MB event once per read), their length, and their last byte.
   */
  let pieces: Buffer[] = []
  let pending = 0
  let lastByte = -1
  /** A CR that ended the last chunk: its LF, if one follows, starts the next. */
  let pendingCR = false
  return {
    transform(chunk, controller) {
      let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      if (pendingCR || buf.indexOf(CR) !== -1) {
        const out: number[] = []
        for (let i = 0; i < buf.length; i++) {
          const c = buf[i]!
          if (pendingCR) {
            pendingCR = false
            if (c === LF) continue
          }
          if (c === CR) {
            out.push(LF)
            pendingCR = true
          } else out.push(c)
        }
        buf = Buffer.from(out)
      }
      if (pending > 0) {
        // Only the new bytes can end the pending event: a blank line in them, or across the seam.
        if (buf.indexOf(BLANK) === -1 && !(lastByte === LF && buf[0] === LF)) {
          pending += buf.length
          if (pending > maxEventBytes) throw responseTooLarge(label, maxEventBytes, 'a stream event')
          if (buf.length > 0) {
            pieces.push(buf)
            lastByte = buf[buf.length - 1]!
          }
          return
        }
        buf = Buffer.concat([...pieces, buf])
        pieces = []
        pending = 0
      }
      let start = 0
      if (batch) {
        const last = buf.lastIndexOf(BLANK)
        if (last !== -1) {
          start = last + 2
          controller.enqueue(buf.subarray(0, start))
        }
      }
      for (let end = batch ? -1 : buf.indexOf(BLANK); end !== -1; end = buf.indexOf(BLANK, start)) {
        if (end + 2 - start > maxEventBytes) throw responseTooLarge(label, maxEventBytes, 'a stream event')
        controller.enqueue(buf.subarray(start, end + 2))
        start = end + 2
      }
      const tail = buf.subarray(start)
      if (tail.length > maxEventBytes) throw responseTooLarge(label, maxEventBytes, 'a stream event')
      if (tail.length > 0) {
        pieces = [tail]
        pending = tail.length
        lastByte = tail[tail.length - 1]!
      }
    },
    flush(controller) {
      // An unfinished last event goes on as it came: the relay behind decides what it means.
      if (pending > 0) controller.enqueue(Buffer.concat(pieces))
      pieces = []
      pending = 0
    },
  }
}
