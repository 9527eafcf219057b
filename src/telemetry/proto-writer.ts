/**
 * @module
 * The protobuf writer the OTLP encoder (otlp-proto.ts) writes with: one growing buffer; a
 * length-delimited message is written in place after its tag and one byte kept for its length,
 * which `end` fills in; only a body of 128 bytes or more (a span, the request's wrappers) needs a
 * longer varint and is slid along to make room. Numbers stay numbers (no BigInt per field).
 */
const utf8 = new TextEncoder()
/** A lower-case hex digit's value ('0'–'9', 'a'–'f'). */
const nibble = (c: number) => (c <= 57 ? c - 48 : c - 87)
/** Wire type 2: length-delimited. */
export const LEN = 2

export class Writer {
  buf: Uint8Array
  pos = 0
  private readonly view = () => new DataView(this.buf.buffer)
  private dv: DataView

  /** `size`: the first buffer's bytes; it doubles as needed and is kept across `reset`. */
  constructor(size = 64 * 1024) {
    this.buf = new Uint8Array(size)
    this.dv = this.view()
  }

  /** Makes room for `n` more bytes: the check small enough to be inlined, the growing apart. */
  room(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n)
  }

  private grow(n: number): void {
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n))
    next.set(this.buf.subarray(0, this.pos))
    this.buf = next
    this.dv = this.view()
  }

  /** A non-negative integer below 2^53. */
  varint(n: number): void {
    // Most varints here (tags, enums, short lengths, token counts) are one byte.
    if (n < 0x80) {
      if (this.pos >= this.buf.length) this.room(1)
      this.buf[this.pos++] = n
      return
    }
    this.room(10)
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 0x80) | 0x80
      n = Math.floor(n / 0x80)
    }
    this.buf[this.pos++] = n
  }

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire)
  }

  /** An int64 field: negative values in two's complement (ten bytes), as protobuf writes them. */
  int(field: number, n: number): void {
    this.tag(field, 0)
    if (n >= 0) this.varint(n)
    else {
      let v = BigInt.asUintN(64, BigInt(n))
      this.room(10)
      while (v >= 0x80n) {
        this.buf[this.pos++] = Number(v & 0x7fn) | 0x80
        v >>= 7n
      }
      this.buf[this.pos++] = Number(v)
    }
  }

  /**
   * Epoch ms → fixed64 nanoseconds, as two 32-bit halves (no BigInt). Nanoseconds since 1970 pass
   * 2^53, so they are never one double: every product and sum below stays under 2^53 and is exact.
   */
  nanos(field: number, ms: number): void {
    this.tag(field, 1)
    this.room(8)
    const whole = Math.floor(ms)
    const sub = Math.round((ms - whole) * 1e6) // ns within the millisecond, 0–1e6
    // whole·1e6 = a·2^16 + b, with a = ⌊whole / 2^16⌋·1e6 (< 2^46) and b = (whole mod 2^16)·1e6.
    const a = Math.floor(whole / 0x10000) * 1e6
    const low = (a % 0x10000) * 0x10000 + (whole % 0x10000) * 1e6 + sub // < 2^38
    const hi = Math.floor(a / 0x10000) + Math.floor(low / 2 ** 32)
    this.uint32(low % 2 ** 32)
    this.uint32(hi)
  }

  /** Four bytes, little-endian (a fixed64's half): plain stores, no DataView call. */
  private uint32(n: number): void {
    const buf = this.buf
    buf[this.pos++] = n & 0xff
    buf[this.pos++] = (n >>> 8) & 0xff
    buf[this.pos++] = (n >>> 16) & 0xff
    buf[this.pos++] = n >>> 24
  }

  double(field: number, n: number): void {
    this.tag(field, 1)
    this.room(8)
    this.dv.setFloat64(this.pos, n, true)
    this.pos += 8
  }

  string(field: number, s: string): void {
    this.tag(field, LEN)
    const n = s.length
    this.room(n * 3 + 5)
    // Most texts here are ASCII and short (model ids, names, request ids): written byte by byte in
    // one pass, no encoder call; a non-ASCII unit met on the way sends the whole text the long way.
    if (n < 0x80) {
      const buf = this.buf
      let p = this.pos
      buf[p++] = n
      let i = 0
      for (; i < n; i++) {
        const c = s.charCodeAt(i)
        if (c >= 0x80) break
        buf[p++] = c
      }
      if (i === n) {
        this.pos = p
        return
      }
    }
    // At most 3 bytes per UTF-16 unit (`room` above); the length goes in front once it is known.
    const start = this.begin(0, true)
    this.pos += utf8.encodeInto(s, this.buf.subarray(this.pos)).written
    this.end(start)
  }

  /** Bytes already encoded (an interned key's field, a repeated attribute), copied in. */
  bytes(b: Uint8Array): void {
    const n = b.length
    this.room(n)
    const buf = this.buf
    const p = this.pos
    // A short copy is cheaper as plain stores than as a native call.
    if (n > 128) buf.set(b, p)
    else for (let i = 0; i < n; i++) buf[p + i] = b[i]!
    this.pos = p + n
  }

  hex(field: number, h: string): void {
    this.tag(field, LEN)
    this.varint(h.length / 2)
    this.room(h.length / 2)
    const buf = this.buf
    let p = this.pos
    for (let i = 0; i < h.length; i += 2)
      buf[p++] = (nibble(h.charCodeAt(i)) << 4) | nibble(h.charCodeAt(i + 1))
    this.pos = p
  }

  /**
   * Starts a length-delimited field (its tag written unless `tagged`) and keeps one byte for its
   * length; returns that byte's place, for `end`.
   */
  begin(field: number, tagged = false): number {
    if (!tagged) this.tag(field, LEN)
    this.room(1)
    return this.pos++
  }

  /**
   * Ends the field begun at `start`: its length written in the byte kept for it. Most bodies here
   * (an attribute, a status) are under 128 bytes and fit; a longer one's body is slid along by the
   * varint's extra bytes.
   */
  end(start: number): void {
    let len = this.pos - start - 1
    if (len < 0x80) {
      this.buf[start] = len
      return
    }
    const size = varintSize(len)
    this.room(size - 1)
    this.buf.copyWithin(start + size, start + 1, this.pos)
    this.pos += size - 1
    let at = start
    while (len >= 0x80) {
      this.buf[at++] = (len % 0x80) | 0x80
      len = Math.floor(len / 0x80)
    }
    this.buf[at] = len
  }

  /** Appends bytes written elsewhere (spans encoded as they ended). */
  raw(b: Uint8Array): void {
    this.room(b.length)
    this.buf.set(b, this.pos)
    this.pos += b.length
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.pos)
  }

  /** Forgets what was written, keeping the buffer. */
  reset(): void {
    this.pos = 0
  }
}

/** Bytes a varint of `n` takes. */
export function varintSize(n: number): number {
  let size = 1
  for (let v = n; v >= 0x80; v = Math.floor(v / 0x80)) size++
  return size
}
