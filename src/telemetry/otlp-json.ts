/**
 * @module
 * OTLP/HTTP JSON (`application/json`): an ExportTraceServiceRequest as the OTLP specification's
 * JSON mapping writes it — trace and span ids as hex strings (not base64), 64-bit integers as
 * decimal strings, enums as numbers, field names in lowerCamelCase.
 */
import { type AttributeValue, type SpanRecord, toNanos } from './span.ts'

export interface Resource {
  serviceName: string
  serviceVersion: string
}

export function anyValue(v: AttributeValue): Record<string, unknown> {
  if (typeof v === 'string') return { stringValue: v }
  if (typeof v === 'boolean') return { boolValue: v }
  return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v }
}

const keyValues = (attrs: Record<string, AttributeValue | undefined>) =>
  Object.entries(attrs).flatMap(([key, v]) => (v === undefined ? [] : [{ key, value: anyValue(v) }]))

/** One span as OTLP JSON text (the exporter keeps the text, not the span, until its batch goes). */
export function spanJson(s: SpanRecord): string {
  return JSON.stringify({
    traceId: s.traceId,
    spanId: s.spanId,
    ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
    name: s.name,
    kind: s.kind,
    startTimeUnixNano: String(toNanos(s.startMs)),
    endTimeUnixNano: String(toNanos(s.endMs)),
    attributes: keyValues(s.attributes),
    status: { code: s.status.code, ...(s.status.message ? { message: s.status.message } : {}) },
  })
}

/** The export request around spans already written by `spanJson`. */
export function wrapJson(spans: string[], resource: Resource): string {
  const head = JSON.stringify({
    resource: {
      attributes: keyValues({
        'service.name': resource.serviceName,
        'service.version': resource.serviceVersion,
      }),
    },
    scopeSpans: [{ scope: { name: 'switchyard', version: resource.serviceVersion }, spans: [] }],
  })
  // `head` ends with `"spans":[]}]}`: the spans go inside its last array.
  return `{"resourceSpans":[${head.slice(0, -4)}${spans.join(',')}]}]}]}`
}

export function encodeJson(spans: SpanRecord[], resource: Resource): string {
  return wrapJson(spans.map(spanJson), resource)
}
