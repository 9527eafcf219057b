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

const keyValues = (attrs: Record<string, AttributeValue>) =>
  Object.entries(attrs).map(([key, v]) => ({ key, value: anyValue(v) }))

export function encodeJson(spans: SpanRecord[], resource: Resource): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: {
          attributes: keyValues({
            'service.name': resource.serviceName,
            'service.version': resource.serviceVersion,
          }),
        },
        scopeSpans: [
          {
            scope: { name: 'switchyard', version: resource.serviceVersion },
            spans: spans.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: s.kind,
              startTimeUnixNano: String(toNanos(s.startMs)),
              endTimeUnixNano: String(toNanos(s.endMs)),
              attributes: keyValues(s.attributes),
              status: { code: s.status.code, ...(s.status.message ? { message: s.status.message } : {}) },
            })),
          },
        ],
      },
    ],
  })
}
