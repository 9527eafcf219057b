/**
 * @module
 * A local OTLP/HTTP trace collector (Bun.serve on 127.0.0.1, port 0) that decodes what it gets —
 * JSON, or protobuf with a tiny reader of the few messages the gateway sends — into one shape:
 * spans with hex ids and plain attribute values.
 *
 * Also a command, the local collector docs/traces.md shows (`bun test/support/otlp-collector.ts
 * 4318`): it listens on the port given (0: any free one), says where on its first line, then
 * prints one line a span (its name, trace id, span id, duration in ms) as exports arrive.
 */

export interface CollectedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  start: bigint
  end: bigint
  attributes: Record<string, string | number | boolean>
  status: { code: number; message: string }
  /** Resource attributes of its batch. */
  resource: Record<string, string | number | boolean>
}

export interface OtlpCollector {
  url: string
  spans: CollectedSpan[]
  /** Content types of the exports received. */
  contentTypes: string[]
  stop(): Promise<void>
}

/** A protobuf reader: each field as [number, wire type, value] (varint as bigint, LEN as bytes). */
function fields(b: Uint8Array): Array<[number, number, bigint | Uint8Array]> {
  const out: Array<[number, number, bigint | Uint8Array]> = []
  let i = 0
  const varint = () => {
    let v = 0n
    let shift = 0n
    for (;;) {
      const byte = b[i++]!
      v |= BigInt(byte & 0x7f) << shift
      if (byte < 0x80) return v
      shift += 7n
    }
  }
  while (i < b.length) {
    const tag = Number(varint())
    const wire = tag & 7
    const field = tag >> 3
    if (wire === 0) out.push([field, wire, varint()])
    else if (wire === 1) {
      const dv = new DataView(b.buffer, b.byteOffset + i, 8)
      out.push([field, wire, dv.getBigUint64(0, true)])
      i += 8
    } else if (wire === 2) {
      const n = Number(varint())
      out.push([field, wire, b.subarray(i, i + n)])
      i += n
    } else if (wire === 5) i += 4
    else throw new Error(`wire type ${wire}`)
  }
  return out
}

const text = (v: unknown) => new TextDecoder().decode(v as Uint8Array)
const hex = (v: unknown) => Buffer.from(v as Uint8Array).toString('hex')

function protoValue(b: Uint8Array): string | number | boolean {
  for (const [f, , v] of fields(b)) {
    if (f === 1) return text(v)
    if (f === 2) return v === 1n
    if (f === 3) return Number(BigInt.asIntN(64, v as bigint))
    if (f === 4) {
      const dv = new DataView(new ArrayBuffer(8))
      dv.setBigUint64(0, v as bigint, true)
      return dv.getFloat64(0, true)
    }
  }
  return ''
}

function protoAttrs(list: Uint8Array[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {}
  for (const kv of list) {
    let key = ''
    let value: string | number | boolean = ''
    for (const [f, , v] of fields(kv)) {
      if (f === 1) key = text(v)
      if (f === 2) value = protoValue(v as Uint8Array)
    }
    out[key] = value
  }
  return out
}

export function decodeProto(body: Uint8Array): CollectedSpan[] {
  const spans: CollectedSpan[] = []
  for (const [, , rs] of fields(body).filter(([f]) => f === 1)) {
    let resource: Record<string, string | number | boolean> = {}
    const scopes: Uint8Array[] = []
    for (const [f, , v] of fields(rs as Uint8Array)) {
      if (f === 1)
        resource = protoAttrs(
          fields(v as Uint8Array)
            .filter(([g]) => g === 1)
            .map(([, , a]) => a as Uint8Array),
        )
      if (f === 2) scopes.push(v as Uint8Array)
    }
    for (const scope of scopes)
      for (const [f, , sb] of fields(scope)) {
        if (f !== 2) continue
        const s: CollectedSpan = {
          traceId: '',
          spanId: '',
          parentSpanId: '',
          name: '',
          kind: 0,
          start: 0n,
          end: 0n,
          attributes: {},
          status: { code: 0, message: '' },
          resource,
        }
        const attrs: Uint8Array[] = []
        for (const [g, , v] of fields(sb as Uint8Array)) {
          if (g === 1) s.traceId = hex(v)
          else if (g === 2) s.spanId = hex(v)
          else if (g === 4) s.parentSpanId = hex(v)
          else if (g === 5) s.name = text(v)
          else if (g === 6) s.kind = Number(v)
          else if (g === 7) s.start = v as bigint
          else if (g === 8) s.end = v as bigint
          else if (g === 9) attrs.push(v as Uint8Array)
          else if (g === 15)
            for (const [h, , w] of fields(v as Uint8Array)) {
              if (h === 2) s.status.message = text(w)
              if (h === 3) s.status.code = Number(w)
            }
        }
        s.attributes = protoAttrs(attrs)
        spans.push(s)
      }
  }
  return spans
}

function jsonValue(v: any): string | number | boolean {
  if ('stringValue' in v) return v.stringValue
  if ('boolValue' in v) return v.boolValue
  if ('intValue' in v) return Number(v.intValue)
  return v.doubleValue
}

const jsonAttrs = (list: any[] = []) => Object.fromEntries(list.map((kv) => [kv.key, jsonValue(kv.value)]))

export function decodeJson(doc: any): CollectedSpan[] {
  return doc.resourceSpans.flatMap((rs: any) =>
    rs.scopeSpans.flatMap((ss: any) =>
      ss.spans.map((s: any) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        name: s.name,
        kind: s.kind,
        start: BigInt(s.startTimeUnixNano),
        end: BigInt(s.endTimeUnixNano),
        attributes: jsonAttrs(s.attributes),
        status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
        resource: jsonAttrs(rs.resource?.attributes),
      })),
    ),
  )
}

/** `onSpans` hears each export's spans as they arrive. */
export function startOtlpCollector(
  port = 0,
  onSpans: (spans: CollectedSpan[]) => void = () => {},
): OtlpCollector {
  const c: OtlpCollector = { url: '', spans: [], contentTypes: [], stop: () => server.stop(true) }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    async fetch(req) {
      if (new URL(req.url).pathname !== '/v1/traces') return new Response(null, { status: 404 })
      const type = req.headers.get('content-type') ?? ''
      c.contentTypes.push(type)
      const body = new Uint8Array(await req.arrayBuffer())
      const spans = type === 'application/json' ? decodeJson(JSON.parse(text(body))) : decodeProto(body)
      c.spans.push(...spans)
      onSpans(spans)
      return new Response('{}', { headers: { 'content-type': 'application/json' } })
    },
  })
  c.url = `http://127.0.0.1:${server.port}`
  return c
}

if (import.meta.main) {
  const port = Number(process.argv[2] ?? 4318)
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error('usage: bun test/support/otlp-collector.ts [PORT]   (0: any free port; default 4318)')
    process.exit(2)
  }
  const c = startOtlpCollector(port, (spans) => {
    for (const s of spans)
      console.log(`${s.name}  trace ${s.traceId}  span ${s.spanId}  ${Number(s.end - s.start) / 1e6} ms`)
  })
  console.log(`OTLP/HTTP collector listening on ${c.url} (POST /v1/traces)`)
}
