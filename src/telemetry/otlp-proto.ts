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
 * Messages are built inside out: a child is encoded first, then written length-delimited.
 */
import type { Resource } from './otlp-json.ts'
import { type AttributeValue, type SpanRecord, toNanos } from './span.ts'

const VARINT = 0
const I64 = 1
const LEN = 2

class Writer {
  private chunks: Uint8Array[] = []
  private size = 0

  private push(b: Uint8Array): void {
    this.chunks.push(b)
    this.size += b.length
  }

  private varint(n: bigint): void {
    const out: number[] = []
    let v = BigInt.asUintN(64, n)
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80)
      v >>= 7n
    }
    out.push(Number(v))
    this.push(Uint8Array.from(out))
  }

  private tag(field: number, wire: number): void {
    this.varint(BigInt((field << 3) | wire))
  }

  uint(field: number, n: number | bigint): this {
    this.tag(field, VARINT)
    this.varint(BigInt(n))
    return this
  }

  fixed64(field: number, n: bigint): this {
    this.tag(field, I64)
    const b = new Uint8Array(8)
    new DataView(b.buffer).setBigUint64(0, n, true)
    this.push(b)
    return this
  }

  double(field: number, n: number): this {
    this.tag(field, I64)
    const b = new Uint8Array(8)
    new DataView(b.buffer).setFloat64(0, n, true)
    this.push(b)
    return this
  }

  bytes(field: number, b: Uint8Array): this {
    this.tag(field, LEN)
    this.varint(BigInt(b.length))
    this.push(b)
    return this
  }

  string(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s))
  }

  message(field: number, m: Writer): this {
    return this.bytes(field, m.finish())
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.size)
    let at = 0
    for (const c of this.chunks) {
      out.set(c, at)
      at += c.length
    }
    return out
  }
}

function anyValue(v: AttributeValue): Writer {
  const w = new Writer()
  if (typeof v === 'string') return w.string(1, v)
  if (typeof v === 'boolean') return w.uint(2, v ? 1 : 0)
  return Number.isInteger(v) ? w.uint(3, BigInt(v)) : w.double(4, v)
}

function attributes(w: Writer, field: number, attrs: Record<string, AttributeValue>): void {
  for (const [key, v] of Object.entries(attrs))
    w.message(field, new Writer().string(1, key).message(2, anyValue(v)))
}

const hex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'))

function span(s: SpanRecord): Writer {
  const w = new Writer().bytes(1, hex(s.traceId)).bytes(2, hex(s.spanId))
  if (s.parentSpanId) w.bytes(4, hex(s.parentSpanId))
  w.string(5, s.name).uint(6, s.kind).fixed64(7, toNanos(s.startMs)).fixed64(8, toNanos(s.endMs))
  attributes(w, 9, s.attributes)
  const status = new Writer()
  if (s.status.message) status.string(2, s.status.message)
  if (s.status.code) status.uint(3, s.status.code)
  return w.message(15, status)
}

export function encodeProto(spans: SpanRecord[], resource: Resource): Uint8Array {
  const res = new Writer()
  attributes(res, 1, { 'service.name': resource.serviceName, 'service.version': resource.serviceVersion })
  const scope = new Writer().message(
    1,
    new Writer().string(1, 'switchyard').string(2, resource.serviceVersion),
  )
  for (const s of spans) scope.message(2, span(s))
  const rs = new Writer().message(1, res).message(2, scope)
  return new Writer().message(1, rs).finish()
}
