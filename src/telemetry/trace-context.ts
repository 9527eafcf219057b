/**
 * @module
 * W3C Trace Context (`traceparent`): `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`.
 * A client's header is continued (its trace id kept, its span the request span's parent); an
 * invalid one is ignored, as the specification asks (a new trace starts).
 *
 * @example
 * parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')
 * // → { traceId: '4bf9…4736', spanId: '00f0…02b7', sampled: true }
 */

export interface SpanContext {
  /** 32 lower-case hex digits, not all zero. */
  traceId: string
  /** 16 lower-case hex digits, not all zero. */
  spanId: string
  sampled: boolean
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

export function parseTraceparent(header: string | null): SpanContext | null {
  if (!header) return null
  const m = TRACEPARENT.exec(header.trim())
  if (!m) return null
  const [, version, traceId, spanId, flags, rest] = m
  // Version ff is invalid; version 00 has nothing after the flags.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null
  if (/^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return null
  return { traceId: traceId!, spanId: spanId!, sampled: (Number.parseInt(flags!, 16) & 1) === 1 }
}

export const formatTraceparent = (traceId: string, spanId: string, sampled: boolean): string =>
  `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`

/** Random bytes drawn from the system's generator a page at a time: one draw per 512 span ids. */
const POOL = Buffer.alloc(4096)
let at = POOL.length

/**
 * `bytes` random bytes as lower-case hex (8 for a span id, 16 for a trace id), never all zero.
 * One flat string from one native call: built by `+=` a byte at a time, an id was a rope of 8–16
 * pieces (as many allocations), flattened again when the encoder read it; a slice of the pool's
 * hex made once per draw was a lazy substring, resolved when first read (the encoder's hex
 * reading took 3 × as long).
 */
export function randomHex(bytes: number): string {
  if (at + bytes > POOL.length) {
    crypto.getRandomValues(POOL)
    at = 0
  }
  let zero = true
  for (let i = at; i < at + bytes; i++) if (POOL[i] !== 0) zero = false
  const out = POOL.toString('hex', at, at + bytes)
  at += bytes
  return zero ? `${out.slice(0, -1)}1` : out
}
