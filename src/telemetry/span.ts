/**
 * @module
 * A finished span as the exporter encodes it (OTLP's Span, reduced to what Switchyard writes).
 * Times are epoch milliseconds with fractions (`performance.timeOrigin + performance.now()`);
 * the encoders turn them into nanoseconds.
 */

export type AttributeValue = string | number | boolean

/** OTLP SpanKind: SERVER for the client's request, CLIENT for an upstream attempt. */
export const SPAN_KIND = { server: 2, client: 3 } as const

/** OTLP StatusCode: UNSET, OK, ERROR. */
export const STATUS_CODE = { unset: 0, ok: 1, error: 2 } as const

export interface SpanRecord {
  traceId: string
  spanId: string
  parentSpanId: string | null
  name: string
  kind: (typeof SPAN_KIND)[keyof typeof SPAN_KIND]
  startMs: number
  endMs: number
  /**
   * Integers are sent as OTLP ints, other numbers as doubles; `undefined`: not set, not sent (a
   * span's object is made with every key it may get, so it is allocated once, at its full shape).
   */
  attributes: Record<string, AttributeValue | undefined>
  status: { code: (typeof STATUS_CODE)[keyof typeof STATUS_CODE]; message?: string }
}

/** The process's time origin, epoch ms: read once (a native getter each time, ~10 % of the span work). */
const ORIGIN = performance.timeOrigin

/** Epoch ms now, with the monotonic clock's fraction. */
export const nowMs = (): number => ORIGIN + performance.now()

/** Epoch ms → nanoseconds as a decimal string (OTLP JSON's int64) or a bigint (protobuf's fixed64). */
export const toNanos = (ms: number): bigint => BigInt(Math.round(ms * 1000)) * 1000n
