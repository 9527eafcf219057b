/**
 * @module
 * OTLP/HTTP protobuf (`application/x-protobuf`): the few messages of an ExportTraceServiceRequest
 * Switchyard sends, encoded by hand (opentelemetry-proto, `trace/v1/trace.proto`,
 * `common/v1/common.proto`, `resource/v1/resource.proto`). Field numbers:
 *
 * - ExportTraceServiceRequest: 1 resource_spans
 * - ResourceSpans: 1 resource, 2 scope_spans; Resource: 1 attributes
 * - ScopeSpans: 1 scope, 2 spans; InstrumentationScope: 1 name, 2 version
 * - Span: 1 trace_id (bytes), 2 span_id, 4 parent_span_id, 5 name, 6 kind (enum),
 *   7 start_time_unix_nano (fixed64), 8 end_time_unix_nano (fixed64), 9 attributes, 15 status
 * - Status: 2 message, 3 code (enum); KeyValue: 1 key, 2 value
 * - AnyValue: 1 string_value, 2 bool_value, 3 int_value (int64), 4 double_value (double)
 *
 * Written with proto-writer.ts's one growing buffer; a batch of 512 spans is one buffer and a few
 * copies.
 */
import type { Resource } from './otlp-json.ts'
import { LEN, varintSize, Writer } from './proto-writer.ts'
import type { AttributeValue, SpanRecord } from './span.ts'

/**
 * An attribute key interned: its KeyValue field 1 (tag, length, UTF-8), encoded the first time
 * it is written; and the whole attribute (tag, length, KeyValue) of the value it last had, kept
 * once that value came twice running. Most of a request's attributes repeat from one request to
 * the next (the operation, the model, the provider, the caller, the status): those are copied,
 * not encoded again. A value that changes every time (a request id) is never kept, so it costs
 * no allocation.
 */
interface Key {
  field: Uint8Array
  last: AttributeValue | undefined
  whole: Uint8Array | null
  /** The field number `whole` was written as (9 in a span, 1 in the resource). */
  wholeField: number
}

/** The gateway's keys are a fixed set of ~25; past {@link MAX_KEYS} (keys from elsewhere) a key is encoded each time. */
const KEYS = new Map<string, Key>()
const MAX_KEYS = 256

function keyOf(key: string): Key | undefined {
  let k = KEYS.get(key)
  if (k === undefined && KEYS.size < MAX_KEYS) {
    const w = new Writer(key.length * 3 + 8)
    w.string(1, key)
    k = { field: w.finish(), last: undefined, whole: null, wholeField: 0 }
    KEYS.set(key, k)
  }
  return k
}

function attribute(w: Writer, field: number, key: string, v: AttributeValue): void {
  const k = keyOf(key)
  if (k === undefined) {
    encodeAttribute(w, field, undefined, key, v)
    return
  }
  if (v === k.last && k.whole !== null && k.wholeField === field) {
    w.bytes(k.whole)
    return
  }
  const start = w.pos
  if (!(typeof v === 'string' ? shortText(w, field, k.field, v) : shortInt(w, field, k.field, v)))
    encodeAttribute(w, field, k.field, key, v)
  if (v === k.last) {
    k.whole = w.buf.slice(start, w.pos)
    k.wholeField = field
  } else {
    k.last = v
    k.whole = null
  }
}

/** Any attribute, the long way: its lengths filled in once its parts are written. */
function encodeAttribute(
  w: Writer,
  field: number,
  k: Uint8Array | undefined,
  key: string,
  v: AttributeValue,
): void {
  const kv = w.begin(field)
  if (k) w.bytes(k)
  else w.string(1, key)
  const value = w.begin(2)
  if (typeof v === 'string') w.string(1, v)
  else if (typeof v === 'boolean') {
    w.tag(2, 0)
    w.varint(v ? 1 : 0)
  } else if (Number.isInteger(v)) w.int(3, v)
  else w.double(4, v)
  w.end(value)
  w.end(kv)
}

/**
 * The common attribute, an interned key and an ASCII text whose KeyValue is under 128 bytes,
 * written in one pass with its lengths known in advance (no length byte filled in after); false,
 * nothing written, when the text is not such a one.
 */
function shortText(w: Writer, field: number, k: Uint8Array, v: string): boolean {
  const n = v.length
  // KeyValue: the key, then field 2 (tag, length) around AnyValue's field 1 (tag, length, text).
  const body = k.length + 4 + n
  if (body >= 0x80) return false
  const tagged = w.pos
  w.tag(field, LEN)
  w.room(body + 1)
  const buf = w.buf
  let p = w.pos
  buf[p++] = body
  for (let i = 0; i < k.length; i++) buf[p++] = k[i]!
  buf[p++] = 0x12
  buf[p++] = n + 2
  buf[p++] = 0x0a
  buf[p++] = n
  for (let i = 0; i < n; i++) {
    const c = v.charCodeAt(i)
    if (c >= 0x80) {
      w.pos = tagged // the tag too: the caller writes the attribute the long way
      return false
    }
    buf[p++] = c
  }
  w.pos = p
  return true
}

/** An interned key and a small non-negative integer (a status, a count): as `shortText`. */
function shortInt(w: Writer, field: number, k: Uint8Array, v: number | boolean): boolean {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= 2 ** 28) return false
  const size = v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : 4
  w.room(k.length + 16)
  w.tag(field, LEN)
  w.varint(k.length + 3 + size)
  w.bytes(k)
  w.buf[w.pos++] = 0x12 // AnyValue, then its field 3 (int_value)
  w.buf[w.pos++] = size + 1
  w.buf[w.pos++] = 0x18
  w.varint(v)
  return true
}

/** One span as ScopeSpans' field 2, appended to `w` (the exporter's batch, as the span ends). */
export function encodeSpan(w: Writer, s: SpanRecord): void {
  const at = w.begin(2)
  w.hex(1, s.traceId)
  w.hex(2, s.spanId)
  if (s.parentSpanId) w.hex(4, s.parentSpanId)
  w.string(5, s.name)
  w.tag(6, 0)
  w.varint(s.kind)
  w.nanos(7, s.startMs)
  w.nanos(8, s.endMs)
  const attrs = s.attributes
  for (const key in attrs) {
    const v = attrs[key]
    if (v !== undefined) attribute(w, 9, key, v)
  }
  const status = w.begin(15)
  if (s.status.message) w.string(2, s.status.message)
  if (s.status.code) {
    w.tag(3, 0)
    w.varint(s.status.code)
  }
  w.end(status)
  w.end(at)
}

/**
 * Bytes kept in front of a batch's spans for the export request's wrappers (the resource, the
 * scope, three tags and lengths: ~100 bytes with Switchyard's resource). A longer head is written
 * into a new buffer instead (one more copy).
 */
const HEAD_ROOM = 256

/**
 * One export request's spans, encoded one by one (`add`, as the exporter seals a batch) behind room kept for the request's
 * wrappers: `seal` writes those in front and copies the spans out once, as the body sent. (The
 * spans used to be copied out, into a new buffer grown by doubling, and slid along twice more: at
 * 512 spans of ~450 bytes, ~1 MB allocated and copied per export.)
 */
export class SpanBatch {
  private readonly w = new Writer()
  private readonly head = new Writer(HEAD_ROOM)
  /** The Resource (ResourceSpans field 1) and the InstrumentationScope (ScopeSpans field 1), tags and lengths included. */
  private readonly resource: Uint8Array
  private readonly scope: Uint8Array

  constructor(resource: Resource) {
    const h = this.head
    const res = h.begin(1)
    attribute(h, 1, 'service.name', resource.serviceName)
    attribute(h, 1, 'service.version', resource.serviceVersion)
    h.end(res)
    this.resource = h.finish()
    h.reset()
    const scope = h.begin(1)
    h.string(1, 'switchyard')
    h.string(2, resource.serviceVersion)
    h.end(scope)
    this.scope = h.finish()
    this.w.pos = HEAD_ROOM
  }

  add(s: SpanRecord): void {
    encodeSpan(this.w, s)
  }

  /** Forgets the spans added since the last seal (a span half-written when its encoding threw included). */
  discard(): void {
    this.w.pos = HEAD_ROOM
  }

  /** The ExportTraceServiceRequest around the spans added since the last seal; the batch is empty again. */
  seal(): Uint8Array {
    const { w, head } = this
    const spans = w.pos - HEAD_ROOM
    const scopeSpans = this.scope.length + spans
    const rs = this.resource.length + 1 + varintSize(scopeSpans) + scopeSpans
    head.reset()
    head.tag(1, LEN)
    head.varint(rs)
    head.raw(this.resource)
    head.tag(2, LEN)
    head.varint(scopeSpans)
    head.raw(this.scope)
    let body: Uint8Array
    if (head.pos <= HEAD_ROOM) {
      const at = HEAD_ROOM - head.pos
      w.buf.set(head.buf.subarray(0, head.pos), at)
      body = w.buf.slice(at, w.pos)
    } else {
      body = new Uint8Array(head.pos + spans)
      body.set(head.buf.subarray(0, head.pos))
      body.set(w.buf.subarray(HEAD_ROOM, w.pos), head.pos)
    }
    w.pos = HEAD_ROOM
    return body
  }
}

export function encodeProto(spans: SpanRecord[], resource: Resource): Uint8Array {
  const batch = new SpanBatch(resource)
  for (const s of spans) batch.add(s)
  return batch.seal()
}
